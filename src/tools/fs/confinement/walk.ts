/**
 * Depth-first walk of a directory inside the workspace, in name order, never
 * following symlinks. Each subdirectory is opened through its parent's
 * descriptor with O_NOFOLLOW|O_DIRECTORY (dir.ts) and read through its own, so
 * a directory swapped for a symlink (to /etc, say) mid-walk is skipped, never
 * listed. Open descriptors: one per level of the current path.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { ToolError } from '../../../engine/index.js';
import { at, openChild, self, type Dir } from './dir.js';
import type { Stopped } from '../context.js';
import { readDirectory, type EntryType } from './dir-reader.js';

export type { EntryType };

export interface WalkEntry {
  /** The entry through its directory's descriptor (dir.ts `at`); valid until the next entry is asked for. */
  at: string;
  /** Path relative to the walk's start, "/"-separated. */
  rel: string;
  type: EntryType;
  /** A file's size when the walk was asked for `sizes` (null otherwise, and when its lstat failed). */
  size: number | null;
}

/** Directories deeper than this below the start are listed but not entered (each level holds a descriptor). */
export const MAX_DEPTH = 128;

export function entryType(d: Dirent): EntryType {
  if (d.isFile()) return 'file';
  if (d.isDirectory()) return 'dir';
  if (d.isSymbolicLink()) return 'symlink';
  return 'other';
}

/** A directory's entries in name order (sizes: each file's, or -1). */
interface Listed {
  names: string[];
  types: EntryType[];
  sizes: Float64Array | null;
}

/**
 * Read a directory through its descriptor. With `sizes`, in one trip to the directory reader thread
 * (dir-reader.ts) rather than one lstat round trip per file; else one readdir on the threadpool.
 */
async function list(dir: Dir, sizes: boolean): Promise<Listed> {
  if (sizes) return readDirectory(dir.fd, true);
  const entries = await readdir(self(dir.fd), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { names: entries.map((d) => d.name), types: entries.map(entryType), sizes: null };
}

interface Frame {
  dir: Dir;
  rel: string;
  /** Subdirectory names still to enter, in order, from `next`. */
  subdirs: string[];
  next: number;
}

/**
 * Yield the entries below `start` (not `start` itself; the caller owns and
 * closes it). Symlinked directories are reported as symlinks and not entered.
 * Unreadable directories, and directories swapped for something else since
 * they were listed, are skipped.
 */
export async function* walk(
  start: Dir,
  options: { recursive: boolean; signal: Stopped; maxDepth?: number; sizes?: boolean },
): AsyncGenerator<WalkEntry> {
  const stack: Frame[] = [];
  try {
    let next: { dir: Dir; rel: string } | null = { dir: start, rel: '' };
    while (next) {
      const frame: Frame = { dir: next.dir, rel: next.rel, subdirs: [], next: 0 };
      stack.push(frame);
      if (options.signal.aborted) throw new ToolError('canceled');
      let listed: Listed;
      try {
        listed = await list(frame.dir, options.sizes ?? false);
      } catch {
        listed = { names: [], types: [], sizes: null };
      }
      const descend = options.recursive && stack.length <= (options.maxDepth ?? MAX_DEPTH);
      const { names, types, sizes } = listed;
      for (let i = 0; i < names.length; i++) {
        const name = names[i]!;
        const type = types[i]!;
        const size = sizes && sizes[i]! >= 0 ? sizes[i]! : null;
        yield { at: at(frame.dir.fd, name), rel: frame.rel ? `${frame.rel}/${name}` : name, type, size };
        if (descend && type === 'dir') frame.subdirs.push(name);
      }
      // Depth-first, yet each directory's own entries come first.
      next = null;
      while (!next && stack.length) {
        const top = stack[stack.length - 1]!;
        const name = top.subdirs[top.next++];
        if (name === undefined) {
          stack.pop();
          if (top.dir !== start) await top.dir.close();
          continue;
        }
        try {
          next = { dir: await openChild(top.dir, name), rel: top.rel ? `${top.rel}/${name}` : name };
        } catch {
          // swapped for a symlink or a file, removed, or unreadable: not entered
        }
      }
    }
  } finally {
    for (const f of stack) if (f.dir !== start) await f.dir.close();
  }
}
