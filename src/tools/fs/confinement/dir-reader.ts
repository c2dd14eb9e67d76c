/**
 * Reads one open directory whole — names in order, types and, for files,
 * sizes — in a single trip to a helper thread (sync-threads.ts), which makes
 * the calls synchronously there: readdir of /proc/self/fd/<fd> and an lstat of
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
 * descriptor closed early could be reused for another directory).
 */
import { ENTRY_TYPES, listDirectory, type EntryType } from '../threads/sync-threads.js';

export type { EntryType };

/** One directory's entries in name order; `sizes[i]` is -1 for a non-file or a file whose lstat failed. */
export interface DirListing {
  names: string[];
  types: EntryType[];
  sizes: Float64Array | null;
}

/**
 * Read the directory open as `fd`: every entry's name and type, sorted by name, and with `sizes` each
 * file's size (lstat, never following a symlink). Rejects with the errno code of a failed readdir.
 */
export async function readDirectory(fd: number, sizes: boolean): Promise<DirListing> {
  const { names, types, sizes: sized } = await listDirectory(fd, [], 0, sizes);
  return { names, types: Array.from(types, (t) => ENTRY_TYPES[t]!), sizes: sized };
}
