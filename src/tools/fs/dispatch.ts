/** One file tool call on a workspace: the same code whether it runs in the gateway or in the privilege-separated worker. */
import { stoppedOf, type FsContext, type FsLimits } from './context.js';
import { grepTool, type GrepArgs } from './tools/grep.js';
import { globTool, listDirTool } from './tools/list.js';
import type { WorkspaceQuota } from './confinement/quota.js';
import { readFileTool, type ReadArgs } from './tools/read.js';
import type { Workspace } from './confinement/workspace.js';
import { editFileTool, writeFileTool, type EditArgs, type WriteArgs } from './tools/write.js';

export type { FsContext, FsLimits } from './context.js';

/** Tools that may grow the workspace (they take the quota into account). */
export const WRITING_TOOLS: ReadonlySet<string> = new Set(['write_file', 'edit_file']);

export function runFsTool(
  ws: Workspace,
  quota: WorkspaceQuota,
  limits: FsLimits,
  name: string,
  args: Record<string, unknown>,
  ctx: FsContext,
) {
  switch (name) {
    case 'read_file':
      return readFileTool(ws, args as unknown as ReadArgs, limits.max_read_bytes, stoppedOf(ctx));
    case 'write_file':
      return writeFileTool(ws, args as unknown as WriteArgs, limits.max_write_bytes, quota);
    case 'edit_file':
      return editFileTool(
        ws,
        args as unknown as EditArgs,
        { maxRead: limits.max_read_bytes, maxWrite: limits.max_write_bytes },
        quota,
      );
    case 'list_dir':
      return listDirTool(
        ws,
        args as { path: string; recursive?: boolean; sizes?: boolean; limit?: number },
        stoppedOf(ctx),
      );
    case 'glob':
      return globTool(ws, args as { pattern: string; path?: string; limit?: number }, ctx);
    case 'grep':
      return grepTool(ws, args as unknown as GrepArgs, limits.max_read_bytes, ctx);
    default:
      throw new Error(`fs plugin has no tool "${name}"`);
  }
}
