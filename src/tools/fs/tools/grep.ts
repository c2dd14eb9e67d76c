/** grep: a regular expression over the text files below a path, bounded in files, bytes and matches. */
import picomatch from 'picomatch';
import { ToolError, ToolOutput } from '../../../engine/index.js';
import type { FsContext } from '../context.js';
import { LineMatcher, type LineMatch } from './line-matcher.js';
import { clampLimit, directory, MAX_SCANNED } from './list.js';
import { walk } from '../confinement/walk.js';
import type { Workspace } from '../confinement/workspace.js';

type OpenFile = Awaited<ReturnType<Workspace['openRegular']>>;

export interface GrepArgs {
  pattern: string;
  path?: string;
  include?: string;
  ignore_case?: boolean;
  limit?: number;
}

type Match = LineMatch & { path: string };

export async function grepTool(
  ws: Workspace,
  args: GrepArgs,
  maxFileBytes: number,
  ctx: FsContext,
): Promise<ToolOutput> {
  const limit = clampLimit(args.limit, 100, 1000);
  const flags = args.ignore_case ? 'i' : '';
  try {
    new RegExp(args.pattern, flags); // compiled here for a clear error; matching runs in the worker
  } catch (err) {
    throw new ToolError(
      `pattern is not a valid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}`,
    );
  }
  const included = args.include ? picomatch(args.include, { basename: true, dot: true }) : () => true;
  const start = await ws.existing(args.path ?? '.');
  const st = await ws.lstat(start);
  if (!st.isFile() && !st.isDirectory()) throw new ToolError(`${start.shown} is neither a file nor a directory`);

  const matcher = new LineMatcher(args.pattern, flags, ctx.signal);
  const matches: Match[] = [];
  const stats = { files_searched: 0, files_skipped: 0 };

  /** Search one file; false once the match limit is exceeded. */
  const searchFile = async (shown: string, open: () => Promise<OpenFile>): Promise<boolean> => {
    const text = await readText(open, maxFileBytes).catch((err: unknown) => {
      if (st.isFile()) throw err; // the one file asked for: say why
      return null;
    });
    if (text === null) {
      stats.files_skipped++;
      return true;
    }
    stats.files_searched++;
    const found = await matcher.match(text, limit - matches.length);
    for (const m of found.matches) matches.push({ path: shown, ...m });
    return !found.more;
  };

  let truncated = false;
  try {
    if (st.isFile()) {
      truncated = !(await searchFile(start.shown, () => ws.openRegular(start)));
    } else {
      const dir = await directory(ws, start.shown);
      try {
        let scanned = 0;
        let reported = 0;
        for await (const e of walk(dir.dir, { recursive: true, signal: ctx.signal })) {
          if (++scanned > MAX_SCANNED) {
            truncated = true;
            break;
          }
          if (e.type !== 'file' || !included(e.rel)) continue;
          const shown = dir.shown === '.' ? e.rel : `${dir.shown}/${e.rel}`;
          if (!(await searchFile(shown, () => ws.openRegularAt(e.at, shown)))) {
            truncated = true;
            break;
          }
          // Every 200 files searched: once per 200, not again for each skipped file while the count stands.
          if (stats.files_searched % 200 === 0 && stats.files_searched !== reported) {
            reported = stats.files_searched;
            ctx.emit('status', { message: `searched ${stats.files_searched} files, ${matches.length} matches so far` });
            await ctx.eventsTaken();
          }
        }
      } finally {
        await dir.dir.close();
      }
    }
  } finally {
    await matcher.close();
  }
  ctx.emit('status', { message: `searched ${stats.files_searched} files, ${matches.length} matches` });
  return new ToolOutput({ data: { matches, truncated, ...stats }, truncated });
}

/** A regular file's text, or null when it is skipped (too large, or binary: a NUL byte near the start). */
async function readText(open: () => Promise<OpenFile>, maxBytes: number): Promise<string | null> {
  const { handle, stats } = await open();
  try {
    if (stats.size > maxBytes) return null;
    const bytes = await handle.readFile();
    if (bytes.length > maxBytes || bytes.subarray(0, 8192).includes(0)) return null;
    return bytes.toString('utf8');
  } finally {
    await handle.close();
  }
}
