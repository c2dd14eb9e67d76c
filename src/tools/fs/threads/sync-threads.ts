/**
 * Synchronous file system calls on helper threads, one trip per operation.
 *
 * Each promise fs call costs the event loop a threadpool request, a promise
 * and its completion; a small read_file made five of them, a list_dir of 100
 * files a hundred lstats. Here a helper thread makes the same system calls
 * synchronously and answers in one message, so the event loop pays one
 * message per operation. Synchronous calls may wait on a disk or a network
 * file system, which is why they run here and never on the event loop.
 *
 * The thread only makes system calls, always relative to a directory
 * descriptor the caller holds open (dir.ts: /proc/self/fd/<fd>/<name> is
 * Node's openat()), with the flags the caller gives; it decides nothing about
 * confinement. What it opened is reported back (the file's type, its real
 * location from /proc/self/fd) for the caller to check (workspace.ts).
 *
 * One thread per process (the gateway, or the privilege-separated worker,
 * where it runs with that process's unprivileged identity, when that worker
 * does not make the calls itself: answerOnThisThread) takes the work:
 * requests queued on one thread are answered back to back with no wake-up in
 * between, which costs less than spreading them. A second thread takes the
 * work while the first has made no progress for STALL_MS (a call waiting on a
 * slow disk or network file system), so one slow call does not hold every
 * other behind it. Started at first use and again after one dies; a thread
 * keeps the process alive only while it has work.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { IdTable } from '../../../utils/id-table.js';
import { handOut } from './hand-out.js';

/** What a directory entry is (symlinks are reported, never followed). */
export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

/** Index of an EntryType as the thread answers it. */
export const ENTRY_TYPES: readonly EntryType[] = ['file', 'dir', 'symlink', 'other'];

/** One directory's entries in name order: `types[i]` indexes ENTRY_TYPES; `sizes[i]` is -1 for a non-file or a failed lstat. */
export interface RawListing {
  names: string[];
  types: Uint8Array;
  sizes: Float64Array | null;
}

/** A regular file opened and read from its start (or `position`) by a thread. */
export interface OpenedFile {
  kind: 'file';
  /** Its real location (the /proc/self/fd link of its descriptor), to be checked by the caller. */
  real: string;
  size: number;
  /** The bytes read. */
  data: Buffer;
  /** Still-open descriptor when the read filled the buffer and `keepOpen` was asked (the caller reads on, then closes it); else null. */
  fd: number | null;
}

/** Why nothing was read: the errno code of a failed call, or what the path named instead of a regular file. */
export type NotOpened = { kind: 'error'; code: string } | { kind: 'dir' } | { kind: 'other' };

// Plain JavaScript, evaluated in the thread (so it runs the same from src/ under the tests and from dist/), or
// on this thread (answerOnThisThread). answer(m) makes one request's system calls: [answer, transfer list].
const OPS_SOURCE = `
const { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync } = require('node:fs');
const { S_IFMT, S_IFREG, S_IFDIR } = constants;
const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const fdPath = (fd) => '/proc/self/fd/' + fd;

// Open names[0..n-1] below the directory fd, each relative to the last, with dirFlags; the caller closes them.
function openDirs(fd, names, dirFlags, opened) {
  let dir = fd;
  for (const name of names) {
    dir = openSync(fdPath(dir) + '/' + name, dirFlags);
    opened.push(dir);
  }
  return dir;
}

function list({ fd, names, dirFlags, sizes, inline }) {
  const opened = [];
  try {
    const dir = fdPath(openDirs(fd, names, dirFlags, opened));
    const dirents = readdirSync(dir, { withFileTypes: true });
    dirents.sort(byName);
    const n = dirents.length;
    const out = new Array(n);
    const types = new Uint8Array(n);
    const size = sizes ? new Float64Array(n) : null;
    for (let i = 0; i < n; i++) {
      const d = dirents[i];
      out[i] = d.name;
      const t = d.isFile() ? 0 : d.isDirectory() ? 1 : d.isSymbolicLink() ? 2 : 3;
      types[i] = t;
      if (!size) continue;
      size[i] = -1;
      if (t !== 0) continue;
      try {
        const st = lstatSync(dir + '/' + d.name, { throwIfNoEntry: false });
        if (st) size[i] = st.size;
      } catch {
        // unreadable: no size, as for a removed entry
      }
    }
    // To another thread, the names as one string (a name never holds a NUL): one string to copy, not one per entry.
    return [{ names: inline ? out : out.join('\\0'), count: n, types, sizes: size }, size ? [types.buffer, size.buffer] : [types.buffer]];
  } finally {
    for (const d of opened) closeSync(d);
  }
}

function read({ fd, names, dirFlags, flags, position, max, slack, keepOpen }) {
  const opened = [];
  let file;
  try {
    const dir = openDirs(fd, names.slice(0, -1), dirFlags, opened);
    file = openSync(fdPath(dir) + '/' + names[names.length - 1], flags);
  } finally {
    for (const d of opened) closeSync(d);
  }
  let keep = false;
  try {
    const st = fstatSync(file);
    const type = st.mode & S_IFMT;
    // Nothing but a regular file is ever read (a FIFO or a device could block or have side effects).
    if (type !== S_IFREG) return [{ kind: type === S_IFDIR ? 'dir' : 'other' }];
    const real = readlinkSync(fdPath(file));
    // Sized by the file (plus slack), never more than max; uninitialised, only the bytes read are used.
    const want = Math.max(0, Math.min(max, st.size - position + slack));
    const buf = Buffer.allocUnsafeSlow(want);
    let got = 0;
    while (got < want) {
      const n = readSync(file, buf, got, want - got, position + got);
      if (n === 0) break;
      got += n;
    }
    keep = keepOpen && got === want && want > 0;
    return [{ kind: 'file', real, size: st.size, data: buf, got, fd: keep ? file : null }, [buf.buffer]];
  } finally {
    if (!keep) closeSync(file);
  }
}

function answer(m) {
  try {
    return m.op === 'list' ? list(m) : read(m);
  } catch (err) {
    return [{ kind: 'error', code: (err && err.code) || 'EIO' }];
  }
}
`;

const THREAD_SOURCE = `${OPS_SOURCE}
require('node:worker_threads').parentPort.on('message', (m) => {
  const a = answer(m);
  a[0].id = m.id;
  require('node:worker_threads').parentPort.postMessage(a[0], a[1]);
});
`;

interface Pending {
  resolve(answer: unknown): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  /** Requests waiting for their answer, by id (an IdTable: see there for why not a Map). */
  pending: IdTable<Pending>;
  /** When it last answered, or was given work while idle (performance.now()). */
  progress: number;
}

const MAX_THREADS = 2;
/** A thread with work that has not answered for this long is taken as stuck on a slow call. */
const STALL_MS = 20;
const threads: Thread[] = [];

function start(): Thread {
  const pending = new IdTable<Pending>();
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 },
    // A descriptor a read leaves open is handed to the event loop, which closes it: the thread must not
    // count it as its own (it would warn when the number comes back, and close it, whoever has it then, on exit).
    trackUnmanagedFds: false,
    // It prints nothing: no stdout/stderr streams of its own.
  });
  worker.on('message', (a: { id: number }) => {
    self.progress = performance.now();
    const p = pending.take(a.id);
    if (!p) return;
    if (pending.size === 0) worker.unref();
    // A few answers per event-loop turn (hand-out.ts), so a health check is not kept behind a convoy of them.
    handOut(() => p.resolve(a));
  });
  const self: Thread = { worker, pending, progress: 0 };
  const gone = (why: string) => {
    const i = threads.indexOf(self);
    if (i >= 0) threads.splice(i, 1);
    const err = Object.assign(new Error(`the file system helper thread ${why}`), { code: 'EIO' });
    for (const p of pending.takeAll()) p.reject(err);
  };
  worker.on('error', (err) => gone(`failed: ${err.message}`));
  worker.on('exit', () => gone('stopped'));
  // Referenced only while it has work (after the listeners: adding one refs the port again).
  worker.unref();
  threads.push(self);
  return self;
}

/** The first thread that is idle or making progress, else a new one while there are fewer than MAX_THREADS, else the least busy. */
function pick(): Thread {
  const now = performance.now();
  for (const t of threads) if (t.pending.size === 0 || now - t.progress < STALL_MS) return t;
  if (threads.length < MAX_THREADS) return start();
  let best = threads[0]!;
  for (const t of threads) if (t.pending.size < best.pending.size) best = t;
  return best;
}

/**
 * Longer than STALL_MS: a request answered here is timed by the clock, which also counts the time this process
 * waited for a CPU it shares with the gateway under load; no local directory listing or bounded read takes this long.
 */
const HERE_STALL_MS = 100;

/** After a slow request, the requests go to helper threads for this long, doubled after each slow one up to HERE_OFF_MAX_MS. */
const HERE_OFF_MS = 1000;
const HERE_OFF_MAX_MS = 60_000;

/** Set by answerOnThisThread: the requests are answered right here, except for a while after a slow one (`offUntil`). */
let here: {
  answer: (m: Record<string, unknown>) => [unknown];
  stallMs: number;
  /** performance.now() before which the requests go to helper threads (0: none was slow). */
  offUntil: number;
  /** How long the next slow request sends them there. */
  offMs: number;
} | null = null;

/**
 * From now on, make the system calls right on the calling thread, with no helper thread: for a process whose
 * event loop does nothing but these calls (the privilege-separated worker, worker-main.ts; never the gateway's
 * own event loop), where the trip to a helper thread — two messages and two wake-ups on a busy CPU — cost more
 * than the calls themselves (measured: about 40 % of that process's CPU per small read_file). A request that
 * takes longer than `stallMs` shows a slow disk or network file system, or a CPU this process waited long for:
 * the requests then go to helper threads for `offMs` (one second by default, twice as long after each slow one
 * up to a minute), so a slow file system holds the others back once in a while, not every time, and a single
 * stall does not cost the fast path for good.
 */
export function answerOnThisThread(stallMs = HERE_STALL_MS, offMs = HERE_OFF_MS): void {
  const answer = new Function('require', `${OPS_SOURCE}\nreturn answer;`)(createRequire(import.meta.url)) as (
    m: Record<string, unknown>,
  ) => [unknown];
  here = { answer, stallMs, offUntil: 0, offMs };
}

/** Whether requests are answered on this thread now (answerOnThisThread, and not just after a slow one); for tests and diagnostics. */
export const answersOnThisThread = (): boolean =>
  here !== null && (here.offUntil === 0 || performance.now() >= here.offUntil);

/** How many helper threads this process has started and still runs; for tests and diagnostics. */
export const helperThreads = (): number => threads.length;

function ask<T>(message: Record<string, unknown>): Promise<T> {
  if (here && answersOnThisThread()) {
    // Answered on this thread: nothing to copy across, so a listing's names stay an array (see list()).
    message.inline = true;
    const started = performance.now();
    const [a] = here.answer(message);
    const now = performance.now();
    if (now - started > here.stallMs) {
      here.offUntil = now + here.offMs;
      here.offMs = Math.min(here.offMs * 2, HERE_OFF_MAX_MS);
    }
    return Promise.resolve(a as T);
  }
  const thread = pick();
  const { worker, pending } = thread;
  return new Promise<T>((resolve, reject) => {
    if (pending.size === 0) {
      worker.ref();
      thread.progress = performance.now();
    }
    const id = pending.add({ resolve: resolve as (a: unknown) => void, reject });
    worker.postMessage({ ...message, id });
  });
}

/**
 * List the directory reached from the open directory `fd` through `names` (each opened with `dirFlags`,
 * relative to the one before; none: `fd` itself): every entry's name and type in name order, and with
 * `sizes` each file's size (lstat, never following a symlink). Rejects with the errno code of a failed
 * open or readdir.
 */
export async function listDirectory(
  fd: number,
  names: readonly string[],
  dirFlags: number,
  sizes: boolean,
): Promise<RawListing> {
  const a = await ask<
    | { names: string | string[]; count: number; types: Uint8Array; sizes: Float64Array | null }
    | { kind: 'error'; code: string }
  >({
    op: 'list',
    fd,
    names,
    dirFlags,
    sizes,
  });
  if ('kind' in a) throw Object.assign(new Error(`reading a directory failed (${a.code})`), { code: a.code });
  const listed = typeof a.names !== 'string' ? a.names : a.count === 0 ? [] : a.names.split('\0');
  return { names: listed, types: a.types, sizes: a.sizes };
}

/**
 * Open the file reached from the open directory `fd` through `names` (the directories opened with
 * `dirFlags`, the file with `flags`), and when it is a regular file read it from `position`: as many
 * bytes as it holds there plus `slack`, at most `max`. With `keepOpen`, a read that filled its buffer
 * leaves the descriptor open for the caller.
 */
export async function openAndRead(
  fd: number,
  names: readonly string[],
  dirFlags: number,
  flags: number,
  read: { position: number; max: number; slack: number; keepOpen: boolean },
): Promise<OpenedFile | NotOpened> {
  const a = await ask<(OpenedFile & { data: Uint8Array; got: number }) | NotOpened>({
    op: 'read',
    fd,
    names,
    dirFlags,
    flags,
    ...read,
  });
  if (a.kind !== 'file') return a;
  // A transferred Buffer arrives as a plain Uint8Array over the same memory.
  return {
    kind: 'file',
    real: a.real,
    size: a.size,
    fd: a.fd,
    data: Buffer.from(a.data.buffer, a.data.byteOffset, a.got),
  };
}
