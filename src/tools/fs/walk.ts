/** Depth-first walk of a directory inside the workspace, in name order, never following symlinks. */
import type { Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolError } from '../../engine/index.js';

export type EntryType = 'file' | 'dir' | 'symlink' | 'other';

export interface WalkEntry {
  /** Real absolute path. */
  real: string;
  /** Path relative to the walk's start, "/"-separated. */
  rel: string;
  type: EntryType;
}

export function entryType(d: Dirent): EntryType {
  if (d.isFile()) return 'file';
  if (d.isDirectory()) return 'dir';
  if (d.isSymbolicLink()) return 'symlink';
  return 'other';
}

/**
 * Yield the entries below `dir` (not `dir` itself). Symlinked directories are
 * reported as symlinks and not entered, so a walk cannot leave the root.
 * Unreadable directories are skipped.
 */
export async function* walk(dir: string, options: { recursive: boolean; signal: AbortSignal }): AsyncGenerator<WalkEntry> {
  const stack: { real: string; rel: string }[] = [{ real: dir, rel: '' }];
  while (stack.length) {
    if (options.signal.aborted) throw new ToolError('canceled');
    const { real, rel } = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = [];
      for await (const d of await opendir(real)) entries.push(d);
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: { real: string; rel: string }[] = [];
    for (const d of entries) {
      const entry: WalkEntry = { real: join(real, d.name), rel: rel ? `${rel}/${d.name}` : d.name, type: entryType(d) };
      yield entry;
      if (options.recursive && entry.type === 'dir') subdirs.push({ real: entry.real, rel: entry.rel });
    }
    // Depth-first, yet each directory's own entries come first; push in reverse to pop in name order.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
  }
}
