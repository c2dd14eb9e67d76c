/** read_file: text by lines (valid UTF-8 only) or raw bytes as base64, bounded by max_read_bytes. */
import type { FileHandle } from 'node:fs/promises';
import { ToolError, ToolOutput } from '../../engine/index.js';
import type { Workspace, WorkspacePath } from './workspace.js';

export interface ReadArgs {
  path: string;
  offset?: number;
  limit?: number;
  encoding?: 'utf8' | 'base64';
}

const CHUNK = 64 * 1024;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export async function readFileTool(ws: Workspace, args: ReadArgs, maxBytes: number, signal: AbortSignal): Promise<ToolOutput> {
  if (args.offset !== undefined && args.offset < 0) throw new ToolError('offset must be 0 or more');
  if (args.limit !== undefined && args.limit < 1) throw new ToolError('limit must be 1 or more');
  const p = await ws.existing(args.path);
  const { handle, stats } = await ws.openRegular(p);
  try {
    return args.encoding === 'base64'
      ? await readBytes(handle, p, stats.size, args, maxBytes)
      : await readLines(handle, p, stats.size, args, maxBytes, signal);
  } finally {
    await handle.close();
  }
}

async function readBytes(handle: FileHandle, p: WorkspacePath, size: number, args: ReadArgs, maxBytes: number): Promise<ToolOutput> {
  const offset = args.offset ?? 0;
  const want = Math.min(args.limit ?? maxBytes, maxBytes, Math.max(0, size - offset));
  // Uninitialised: only the bytes read into it are ever used.
  const buf = Buffer.allocUnsafe(want);
  let got = 0;
  while (got < want) {
    const { bytesRead } = await handle.read(buf, got, want - got, offset + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  const end = offset + got;
  const truncated = end < size && (args.limit === undefined || args.limit > maxBytes);
  return new ToolOutput({
    data: {
      path: p.shown,
      encoding: 'base64',
      content: buf.subarray(0, got).toString('base64'),
      size,
      offset,
      count: got,
      next_offset: end < size ? end : null,
      truncated,
    },
    truncated,
  });
}

async function readLines(
  handle: FileHandle,
  p: WorkspacePath,
  size: number,
  args: ReadArgs,
  maxBytes: number,
  signal: AbortSignal,
): Promise<ToolOutput> {
  const first = Math.max(1, args.offset ?? 1); // 1-based line number; 0 means "from the start" too
  const limit = args.limit ?? Infinity;
  // Sized by the file's length (from fstat) up to CHUNK, uninitialised (only the bytes read are used):
  // a small file needs no 64 KiB zero-filled buffer. One byte more than the size, so a file that grew
  // since fstat shows as a full read and reading goes on, in CHUNK-sized reads from then on.
  let buf = Buffer.allocUnsafe(Math.min(CHUNK, size + 1));
  const parts: Buffer[] = [];
  let collected = 0;
  let line = 1; // number of the line the next byte belongs to
  let lines = 0; // complete lines collected
  let pos = 0; // file offset of buf[0]
  let consumed = 0; // file offset just past the last byte looked at
  let stop: 'eof' | 'limit' | 'bytes' = 'eof';
  let lastByte = -1;

  scan: for (;;) {
    if (signal.aborted) throw new ToolError('read canceled');
    const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    // A short read of a regular file is its end (Linux pread on a regular file is never cut short otherwise):
    // no second read just to be told so.
    const atEnd = bytesRead < buf.length;
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
    if (atEnd) break;
    if (buf.length < CHUNK) buf = Buffer.allocUnsafe(CHUNK);
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
      throw new ToolError(`offset ${first} is past the end of ${p.shown}, which has ${totalLines} line${totalLines === 1 ? '' : 's'}`);
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
