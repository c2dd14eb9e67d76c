/** grep: a regular expression over the text files below a path, bounded in files, bytes and matches. */
import { lstat } from 'node:fs/promises';
import picomatch from 'picomatch';
import { ToolError, ToolOutput, type ToolContext } from '../../engine/index.js';
import { clampLimit, MAX_SCANNED } from './list.js';
import { walk } from './walk.js';
import type { Workspace, WorkspacePath } from './workspace.js';

export interface GrepArgs {
  pattern: string;
  path?: string;
  include?: string;
  ignore_case?: boolean;
  limit?: number;
}

interface Match {
  path: string;
  line: number;
  text: string;
}

/** Longest line text returned per match; longer lines are cut around the match. */
const MAX_LINE_TEXT = 400;

export async function grepTool(ws: Workspace, args: GrepArgs, maxFileBytes: number, ctx: ToolContext): Promise<ToolOutput> {
  const limit = clampLimit(args.limit, 100, 1000);
  let regex: RegExp;
  try {
    regex = new RegExp(args.pattern, args.ignore_case ? 'i' : '');
  } catch (err) {
    throw new ToolError(`pattern is not a valid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}`);
  }
  const included = args.include ? picomatch(args.include, { basename: true, dot: true }) : () => true;
  const start = await ws.existing(args.path ?? '.');
  const st = await lstat(start.real);

  const matches: Match[] = [];
  const stats = { files_searched: 0, files_skipped: 0 };
  let truncated = false;

  const searchFile = async (p: WorkspacePath): Promise<boolean> => {
    let text: string;
    try {
      const { handle, stats: fst } = await ws.openRegular(p);
      try {
        if (fst.size > maxFileBytes) {
          stats.files_skipped++;
          return true;
        }
        const bytes = await handle.readFile();
        if (bytes.subarray(0, 8192).includes(0)) {
          stats.files_skipped++; // binary
          return true;
        }
        text = bytes.toString('utf8');
      } finally {
        await handle.close();
      }
    } catch (err) {
      if (err instanceof ToolError && st.isFile()) throw err;
      stats.files_skipped++;
      return true;
    }
    stats.files_searched++;
    let lineNo = 0;
    for (const line of text.split('\n')) {
      lineNo++;
      const m = regex.exec(line);
      if (!m) continue;
      if (matches.length >= limit) return false;
      matches.push({ path: p.shown, line: lineNo, text: excerpt(line.endsWith('\r') ? line.slice(0, -1) : line, m.index) });
    }
    return true;
  };

  if (st.isFile()) {
    truncated = !(await searchFile(start));
  } else if (st.isDirectory()) {
    let scanned = 0;
    for await (const e of walk(start.real, { recursive: true, signal: ctx.signal })) {
      if (++scanned > MAX_SCANNED) {
        truncated = true;
        break;
      }
      if (e.type !== 'file' || !included(e.rel)) continue;
      if (!(await searchFile({ real: e.real, shown: ws.show(e.real) }))) {
        truncated = true;
        break;
      }
      if (stats.files_searched % 200 === 0) {
        ctx.emit('status', { message: `searched ${stats.files_searched} files, ${matches.length} matches so far` });
      }
    }
  } else {
    throw new ToolError(`${start.shown} is neither a file nor a directory`);
  }
  ctx.emit('status', { message: `searched ${stats.files_searched} files, ${matches.length} matches` });
  return new ToolOutput({ data: { matches, truncated, ...stats }, truncated });
}

function excerpt(line: string, at: number): string {
  if (line.length <= MAX_LINE_TEXT) return line;
  const from = Math.max(0, Math.min(at - 100, line.length - MAX_LINE_TEXT));
  return (from > 0 ? '…' : '') + line.slice(from, from + MAX_LINE_TEXT) + (from + MAX_LINE_TEXT < line.length ? '…' : '');
}
