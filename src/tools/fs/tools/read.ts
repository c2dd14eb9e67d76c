/** read_file: text by lines (valid UTF-8 only) or raw bytes as base64, bounded by max_read_bytes. */
import { close, read } from 'node:fs';
import { ToolError, ToolOutput } from '../../../engine/index.js';
import type { Workspace, WorkspacePath } from '../confinement/workspace.js';
import type { Stopped } from '../context.js';

export interface ReadArgs {
  path: string;
  offset?: number;
  limit?: number;
  encoding?: 'utf8' | 'base64';
}

const CHUNK = 64 * 1024;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Reads `buf.length` bytes (or fewer at the end) of the open file at `pos`; resolves with the count. */
type ReadAt = (buf: Buffer, pos: number) => Promise<number>;

/** The file's first bytes (from `offset` for base64, else from 0), whether they filled what was asked, and how to read on. */
interface Start {
  p: WorkspacePath;
  size: number;
  first: Buffer;
  full: boolean;
  readAt: ReadAt | null;
}

const fdReadAt =
  (fd: number): ReadAt =>
  (buf, pos) =>
    new Promise((resolve, reject) => read(fd, buf, 0, buf.length, pos, (err, n) => (err ? reject(err) : resolve(n))));

export async function readFileTool(
  ws: Workspace,
  args: ReadArgs,
  maxBytes: number,
  signal: Stopped,
): Promise<ToolOutput> {
  if (args.offset !== undefined && args.offset < 0) throw new ToolError('offset must be 0 or more');
  if (args.limit !== undefined && args.limit < 1) throw new ToolError('limit must be 1 or more');
  const base64 = args.encoding === 'base64';
  // base64: the bytes asked for, at most maxBytes, from offset. utf8: the first chunk, sized by the file's
  // length up to CHUNK plus one byte, so a file that grew since fstat shows as a full read and reading goes on.
  const position = base64 ? (args.offset ?? 0) : 0;
  const max = base64 ? Math.min(args.limit ?? maxBytes, maxBytes) : CHUNK;
  const slack = base64 ? 0 : 1;

  // The fast path: open, check and read in one trip to a helper thread (workspace.ts openAndRead).
  const fast = await ws.openAndRead(args.path, { position, max, slack, keepOpen: !base64 });
  if (fast) {
    const { p, file } = fast;
    const fd = file.fd;
    const start: Start = {
      p,
      size: file.size,
      first: file.data,
      full: fd !== null,
      readAt: fd === null ? null : fdReadAt(fd),
    };
    try {
      return base64 ? bytesOutput(start, args, maxBytes) : await readLines(start, args, maxBytes, signal);
    } finally {
      if (fd !== null) await new Promise((resolve) => close(fd, resolve));
    }
  }

  // The long way (a symlink on the path, or an error to explain): realpath, then the descriptor walk.
  const p = await ws.existing(args.path);
  const { handle, stats } = await ws.openRegular(p);
  try {
    const size = stats.size;
    // Uninitialised: only the bytes read into it are ever used.
    const buf = Buffer.allocUnsafe(Math.max(0, Math.min(max, size - position + slack)));
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, position + got);
      if (bytesRead === 0) break;
      got += bytesRead;
      if (!base64) break; // a short read of a regular file is its end (Linux pread is never cut short otherwise)
    }
    const readAt: ReadAt = async (b, pos) => (await handle.read(b, 0, b.length, pos)).bytesRead;
    const start: Start = { p, size, first: buf.subarray(0, got), full: got === buf.length && got > 0, readAt };
    return base64 ? bytesOutput(start, args, maxBytes) : await readLines(start, args, maxBytes, signal);
  } finally {
    await handle.close();
  }
}

function bytesOutput({ p, size, first }: Start, args: ReadArgs, maxBytes: number): ToolOutput {
  const offset = args.offset ?? 0;
  const got = first.length;
  const end = offset + got;
  const truncated = end < size && (args.limit === undefined || args.limit > maxBytes);
  return new ToolOutput({
    data: {
      path: p.shown,
      encoding: 'base64',
      content: first.toString('base64'),
      size,
      offset,
      count: got,
      next_offset: end < size ? end : null,
      truncated,
    },
    truncated,
  });
}

async function readLines(start: Start, args: ReadArgs, maxBytes: number, signal: Stopped): Promise<ToolOutput> {
  const { p, size } = start;
  const first = Math.max(1, args.offset ?? 1); // 1-based line number; 0 means "from the start" too
  const limit = args.limit ?? Infinity;
  const parts: Buffer[] = [];
  let collected = 0;
  let line = 1; // number of the line the next byte belongs to
  let lines = 0; // complete lines collected
  let pos = 0; // file offset of chunk[0]
  let consumed = 0; // file offset just past the last byte looked at
  let stop: 'eof' | 'limit' | 'bytes' = 'eof';
  let lastByte = -1;
  let chunk = start.first;
  // A short read of a regular file is its end: no further read just to be told so.
  let full = start.full;
  let buf: Buffer | null = null;

  // Checked around each further read, not before scanning the first chunk (already in memory): a read that
  // fits in it finishes without asking (see stoppedOf), and a stopped call's answer is already given.
  scan: for (;;) {
    const bytesRead = chunk.length;
    if (bytesRead === 0) break;
    lastByte = chunk[bytesRead - 1]!;
    let i = 0;
    while (i < bytesRead) {
      const nl = chunk.indexOf(10, i);
      const end = nl === -1 ? bytesRead : nl + 1;
      if (line >= first) {
        const room = maxBytes - collected;
        if (end - i > room) {
          parts.push(Buffer.from(chunk.subarray(i, i + room)));
          collected += room;
          consumed = pos + i + room;
          stop = 'bytes';
          break scan;
        }
        parts.push(Buffer.from(chunk.subarray(i, end)));
        collected += end - i;
      }
      consumed = pos + end;
      if (nl !== -1) {
        if (line >= first) lines++;
        line++;
        if (lines >= limit) {
          stop = 'limit';
          break scan;
        }
      }
      i = end;
    }
    pos += bytesRead;
    if (!full || !start.readAt) break;
    if (signal.aborted) throw new ToolError('read canceled');
    buf ??= Buffer.allocUnsafe(CHUNK);
    const n = await start.readAt(buf, pos);
    if (signal.aborted) throw new ToolError('read canceled');
    chunk = buf.subarray(0, n);
    full = n === buf.length;
  }

  let content = Buffer.concat(parts, collected);
  let nextOffset: number | null = null;
  let truncated = false;
  if (stop === 'bytes') {
    truncated = true;
    const lastNl = content.lastIndexOf(10);
    if (lastNl >= 0) {
      content = content.subarray(0, lastNl + 1); // whole lines only; continue at the next one
      nextOffset = first + lines;
    } else {
      content = content.subarray(0, utf8Boundary(content)); // one line longer than the cap
    }
  } else if (stop === 'limit') {
    nextOffset = consumed < size ? first + lines : null;
  } else {
    // A final line without a newline still counts.
    const totalLines = line - (lastByte === 10 || lastByte === -1 ? 1 : 0);
    if (first > 1 && first > totalLines) {
      throw new ToolError(
        `offset ${first} is past the end of ${p.shown}, which has ${totalLines} line${totalLines === 1 ? '' : 's'}`,
      );
    }
    if (lastByte !== 10 && lastByte !== -1 && line >= first) lines++;
  }

  let text: string;
  try {
    text = strictUtf8.decode(content);
  } catch {
    throw new ToolError(`${p.shown} is not valid UTF-8 text (a binary file?); read it with encoding: "base64" instead`);
  }
  return new ToolOutput({
    data: {
      path: p.shown,
      encoding: 'utf8',
      content: text,
      size,
      offset: first,
      count: stop === 'bytes' && nextOffset === null ? 1 : lines,
      next_offset: nextOffset,
      truncated,
    },
    truncated,
  });
}

/** Length of `b` without a trailing incomplete UTF-8 sequence. */
export function utf8Boundary(b: Buffer): number {
  let end = b.length;
  let back = 0;
  while (end - back > 0 && back < 4 && (b[end - back - 1]! & 0xc0) === 0x80) back++;
  const lead = b[end - back - 1];
  if (lead === undefined || lead < 0xc0) return end; // ASCII, or stray continuation bytes: nothing to cut
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  if (back + 1 < need) end -= back + 1;
  return end;
}
