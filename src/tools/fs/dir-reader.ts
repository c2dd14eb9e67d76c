/**
 * Reads one open directory whole — names in order, types and, for files,
 * sizes — in a single trip to a helper thread, which makes the calls
 * synchronously there: readdir of /proc/self/fd/<fd> and an lstat of
 * /proc/self/fd/<fd>/<name> per file (dir.ts: the fd-relative fstatat()).
 *
 * Why: list_dir answers each file's size, and one promise lstat per entry on
 * the libuv threadpool costs a request, a promise and a Stats object each on
 * the event loop (about 100 round trips for a 100-entry directory, their
 * completions handled back to back). A synchronous lstat is several times
 * cheaper but may wait on the disk or a network file system, so it never runs
 * on the event loop: here it costs the event loop one message per directory.
 *
 * The caller keeps the directory's descriptor open until the answer came (a
 * descriptor closed early could be reused for another directory). One thread
 * per process (the gateway, or the privilege-separated worker, where it runs
 * with that process's unprivileged identity), started at first use and again
 * after it dies; it keeps the process alive only while a directory is being read.
 */
import { Worker } from 'node:worker_threads';

/** One directory's entries in name order; `sizes[i]` is -1 for a non-file or a file whose lstat failed. */
export interface DirListing {
  names: string[];
  types: EntryType[];
  sizes: Float64Array | null;
}

/** What a directory entry is (symlinks are reported, never followed). */
export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

const TYPES: readonly EntryType[] = ['file', 'dir', 'symlink', 'other'];

// Plain JavaScript, evaluated in the thread (so it runs the same from src/ under the tests and from dist/).
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { readdirSync, lstatSync } = require('node:fs');
const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
parentPort.on('message', ({ id, fd, sizes }) => {
  const dir = '/proc/self/fd/' + fd;
  let dirents;
  try {
    dirents = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    parentPort.postMessage({ id, error: (err && err.code) || 'EIO' });
    return;
  }
  dirents.sort(byName);
  const n = dirents.length;
  const names = new Array(n);
  const types = new Uint8Array(n);
  const size = sizes ? new Float64Array(n) : null;
  for (let i = 0; i < n; i++) {
    const d = dirents[i];
    names[i] = d.name;
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
  parentPort.postMessage({ id, names, types, sizes: size }, size ? [types.buffer, size.buffer] : [types.buffer]);
});
`;

type Answer = { id: number; error: string } | { id: number; names: string[]; types: Uint8Array; sizes: Float64Array | null };

interface Pending {
  resolve(listing: DirListing): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
}

let thread: Thread | null = null;
let nextId = 1;

function start(): Thread {
  const pending = new Map<number, Pending>();
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 },
    // It prints nothing: no stdout/stderr streams of its own.
  });
  worker.on('message', (a: Answer) => {
    const p = pending.get(a.id);
    if (!p) return;
    pending.delete(a.id);
    if (pending.size === 0) worker.unref();
    if ('error' in a) p.reject(Object.assign(new Error(`reading a directory failed (${a.error})`), { code: a.error }));
    else p.resolve({ names: a.names, types: Array.from(a.types, (t) => TYPES[t]!), sizes: a.sizes });
  });
  const self: Thread = { worker, pending };
  const gone = (why: string) => {
    if (thread === self) thread = null;
    const err = Object.assign(new Error(`the directory reader thread ${why}`), { code: 'EIO' });
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('error', (err) => gone(`failed: ${err.message}`));
  worker.on('exit', () => gone('stopped'));
  // Referenced only while a directory is being read (after the listeners: adding one refs the port again).
  worker.unref();
  return self;
}

/**
 * Read the directory open as `fd`: every entry's name and type, sorted by name, and with `sizes` each
 * file's size (lstat, never following a symlink). Rejects with the errno code of a failed readdir.
 */
export function readDirectory(fd: number, sizes: boolean): Promise<DirListing> {
  const { worker, pending } = (thread ??= start());
  const id = nextId++;
  return new Promise<DirListing>((resolve, reject) => {
    if (pending.size === 0) worker.ref();
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, fd, sizes });
  });
}
