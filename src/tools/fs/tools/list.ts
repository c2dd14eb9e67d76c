/** list_dir, glob and grep: bounded walks over the workspace. */
import type { Dir } from '../confinement/dir.js';
import picomatch from 'picomatch';
import { ToolError, ToolOutput } from '../../../engine/index.js';
import type { FsContext, Stopped } from '../context.js';
import { listingJson } from './listing-json.js';
import type { RawListing } from '../threads/sync-threads.js';
import { walk, type EntryType } from '../confinement/walk.js';
import type { Workspace } from '../confinement/workspace.js';

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 10_000;
/** Entries a glob or grep walk looks at before it stops and reports truncated. */
export const MAX_SCANNED = 200_000;

export function clampLimit(limit: number | undefined, fallback: number, max: number): number {
  if (limit !== undefined && limit < 1) throw new ToolError('limit must be 1 or more');
  return Math.min(limit ?? fallback, max);
}

/** A directory of the workspace, open by descriptors (close `dir` after use). */
export async function directory(ws: Workspace, path: string): Promise<{ shown: string; dir: Dir }> {
  const p = await ws.existing(path);
  return { shown: p.shown, dir: await ws.openDir(p) };
}

const joinShown = (base: string, rel: string) => (base === '.' ? rel : `${base}/${rel}`);

export async function listDirTool(
  ws: Workspace,
  args: { path: string; recursive?: boolean; sizes?: boolean; limit?: number },
  signal: Stopped,
): Promise<ToolOutput> {
  const limit = clampLimit(args.limit, DEFAULT_LIMIT, MAX_LIMIT);
  // Sizes only when asked: an lstat per file costs several times the listing (getdents gives names and types).
  const sizes = args.sizes === true;
  if (!args.recursive) {
    // One directory: opened and read in one trip to a helper thread when its path has no symlink on it.
    const direct = await ws.listDirect(args.path, sizes);
    if (direct) return oneDirectory(direct.shown, direct.listing, limit);
  }
  const dir = await directory(ws, args.path);
  const entries: Entry[] = [];
  let truncated = false;
  // With sizes, each directory's entries come with their files' sizes, read in one trip per directory (dir-reader.ts).
  try {
    for await (const e of walk(dir.dir, { recursive: args.recursive ?? false, signal, sizes })) {
      if (entries.length >= limit) {
        truncated = true;
        break;
      }
      const path = joinShown(dir.shown, e.rel);
      entries.push(sizes ? { path, type: e.type, size: e.type === 'file' ? e.size : null } : { path, type: e.type });
    }
  } finally {
    await dir.dir.close();
  }
  return new ToolOutput({ data: { path: dir.shown, entries, truncated }, truncated });
}

/** One entry of list_dir's answer: `size` only when sizes were asked for. */
interface Entry {
  path: string;
  type: EntryType;
  size?: number | null;
}

/** list_dir's answer for one directory's listing (with sizes when the listing has them), its data as JSON text. */
function oneDirectory(shown: string, listing: RawListing, limit: number): ToolOutput {
  const { text, truncated } = listingJson(shown, listing, limit);
  return new ToolOutput({ data: text, truncated });
}

/** A catch handler turning "does not exist" / "not a directory" into `value`; other errors (escapes) pass. */
function notFoundAs<T>(value: T) {
  return (err: unknown): T => {
    if (err instanceof ToolError && /does not exist|is not a directory/.test(err.message)) return value;
    throw err;
  };
}

/** A glob pattern must stay relative and below its start directory. */
function checkPattern(pattern: string): void {
  if (pattern.startsWith('/'))
    throw new ToolError('pattern must be relative to "path" (it is absolute); e.g. "**/*.ts"');
  if (pattern.split('/').includes('..'))
    throw new ToolError('pattern must not contain ".." segments; set "path" instead');
}

export async function globTool(
  ws: Workspace,
  args: { pattern: string; path?: string; limit?: number },
  ctx: FsContext,
): Promise<ToolOutput> {
  checkPattern(args.pattern);
  const limit = clampLimit(args.limit, DEFAULT_LIMIT, MAX_LIMIT);
  // Start the walk at the pattern's literal prefix ("src/**/*.ts" → walk src/ for "**/*.ts").
  const { base, glob } = picomatch.scan(args.pattern);
  const start = await ws.existing(args.path ?? '.');
  if (!(await ws.lstat(start)).isDirectory()) throw new ToolError(`${start.shown} is not a directory`);
  const none = () => new ToolOutput({ data: { path: start.shown, matches: [], truncated: false } });
  if (!glob) {
    // No wildcard at all: the pattern names one path.
    const one = await ws.existing(joinShown(start.shown, base)).catch(notFoundAs(null));
    if (!one || (await ws.lstat(one)).isDirectory()) return none();
    return new ToolOutput({ data: { path: start.shown, matches: [one.shown], truncated: false } });
  }
  const dir = await directory(ws, base ? joinShown(start.shown, base) : start.shown).catch(notFoundAs(null));
  if (!dir) return none();
  const isMatch = picomatch(glob || '*');
  const recursive = glob.includes('/') || glob.includes('**');
  const matches: string[] = [];
  let scanned = 0;
  let truncated = false;
  try {
    for await (const e of walk(dir.dir, { recursive, signal: ctx.signal })) {
      if (++scanned > MAX_SCANNED) {
        truncated = true;
        break;
      }
      if (scanned % 5000 === 0)
        ctx.emit('status', { message: `scanned ${scanned} entries, ${matches.length} matches` });
      if (e.type === 'dir' || !isMatch(e.rel)) continue;
      if (matches.length >= limit) {
        truncated = true;
        break;
      }
      matches.push(joinShown(dir.shown, e.rel));
    }
  } finally {
    await dir.dir.close();
  }
  ctx.emit('status', { message: `scanned ${Math.min(scanned, MAX_SCANNED)} entries, ${matches.length} matches` });
  return new ToolOutput({ data: { path: dir.shown, matches, truncated }, truncated });
}
