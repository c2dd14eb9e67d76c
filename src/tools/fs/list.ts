/** list_dir, glob and grep: bounded walks over the workspace. */
import { lstat } from 'node:fs/promises';
import picomatch from 'picomatch';
import { ToolError, ToolOutput, type ToolContext } from '../../engine/index.js';
import { walk, type EntryType } from './walk.js';
import type { Workspace } from './workspace.js';

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 10_000;
/** Entries a glob or grep walk looks at before it stops and reports truncated. */
export const MAX_SCANNED = 200_000;

export function clampLimit(limit: number | undefined, fallback: number, max: number): number {
  if (limit !== undefined && limit < 1) throw new ToolError('limit must be 1 or more');
  return Math.min(limit ?? fallback, max);
}

async function directory(ws: Workspace, path: string) {
  const p = await ws.existing(path);
  const st = await lstat(p.real);
  if (!st.isDirectory()) throw new ToolError(`${p.shown} is not a directory`);
  return p;
}

const joinShown = (base: string, rel: string) => (base === '.' ? rel : `${base}/${rel}`);

export async function listDirTool(
  ws: Workspace,
  args: { path: string; recursive?: boolean; limit?: number },
  signal: AbortSignal,
): Promise<ToolOutput> {
  const limit = clampLimit(args.limit, DEFAULT_LIMIT, MAX_LIMIT);
  const dir = await directory(ws, args.path);
  const entries: { path: string; type: EntryType; size: number | null }[] = [];
  let truncated = false;
  for await (const e of walk(dir.real, { recursive: args.recursive ?? false, signal })) {
    if (entries.length >= limit) {
      truncated = true;
      break;
    }
    const size = e.type === 'file' ? await lstat(e.real).then((s) => s.size, () => null) : null;
    entries.push({ path: joinShown(dir.shown, e.rel), type: e.type, size });
  }
  return new ToolOutput({ data: { path: dir.shown, entries, truncated }, truncated });
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
  if (pattern.startsWith('/')) throw new ToolError('pattern must be relative to "path" (it is absolute); e.g. "**/*.ts"');
  if (pattern.split('/').includes('..')) throw new ToolError('pattern must not contain ".." segments; set "path" instead');
}

export async function globTool(
  ws: Workspace,
  args: { pattern: string; path?: string; limit?: number },
  ctx: ToolContext,
): Promise<ToolOutput> {
  checkPattern(args.pattern);
  const limit = clampLimit(args.limit, DEFAULT_LIMIT, MAX_LIMIT);
  // Start the walk at the pattern's literal prefix ("src/**/*.ts" → walk src/ for "**/*.ts").
  const { base, glob } = picomatch.scan(args.pattern);
  const start = await directory(ws, args.path ?? '.');
  const none = () => new ToolOutput({ data: { path: start.shown, matches: [], truncated: false } });
  if (!glob) {
    // No wildcard at all: the pattern names one path.
    const one = await ws.existing(joinShown(start.shown, base)).catch(notFoundAs(null));
    if (!one || (await lstat(one.real)).isDirectory()) return none();
    return new ToolOutput({ data: { path: start.shown, matches: [one.shown], truncated: false } });
  }
  let dir = start;
  if (base) {
    const found = await directory(ws, joinShown(start.shown, base)).catch(notFoundAs(null));
    if (!found) return none();
    dir = found;
  }
  const isMatch = picomatch(glob || '*');
  const recursive = glob.includes('/') || glob.includes('**');
  const matches: string[] = [];
  let scanned = 0;
  let truncated = false;
  for await (const e of walk(dir.real, { recursive, signal: ctx.signal })) {
    if (++scanned > MAX_SCANNED) {
      truncated = true;
      break;
    }
    if (scanned % 5000 === 0) ctx.emit('status', { message: `scanned ${scanned} entries, ${matches.length} matches` });
    if (e.type === 'dir' || !isMatch(e.rel)) continue;
    if (matches.length >= limit) {
      truncated = true;
      break;
    }
    matches.push(joinShown(dir.shown, e.rel));
  }
  ctx.emit('status', { message: `scanned ${Math.min(scanned, MAX_SCANNED)} entries, ${matches.length} matches` });
  return new ToolOutput({ data: { path: dir.shown, matches, truncated }, truncated });
}
