import { z } from 'zod';
import { principalRootProblem } from './principal-dir.js';

const MiB = 1024 * 1024;

/** tools.fs — file tools confined to the workspace root. */
export const FsConfig = z.strictObject({
  /** Offer the file tools (read_file, write_file, edit_file, list_dir, glob, grep). */
  enabled: z.boolean().default(true),
  /**
   * The workspace: every file tool (and the shell's working directory) is confined to it. Created at start. With
   * `{principal}` as its last component (e.g. /srv/a2e/workspaces/{principal}) each principal (token name or JWT
   * principal) gets its own, created 0700 on its first call under a name derived safely from the principal
   * (docs/tenants.md); without auth that is one workspace, "anonymous".
   */
  root: z
    .string()
    .min(1)
    .default('./workspace')
    .superRefine((root, ctx) => {
      const problem = principalRootProblem(root);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  /** Offer only the reading tools (read_file, list_dir, glob, grep); write_file and edit_file are not listed. */
  read_only: z.boolean().default(false),
  /** Most bytes one read_file (or edit_file, or grep per file) reads. */
  max_read_bytes: z.int().positive().default(MiB),
  /** Largest file write_file or edit_file may write. */
  max_write_bytes: z
    .int()
    .positive()
    .default(10 * MiB),
  /**
   * Most disk bytes the workspace may hold (like `du`); null for no quota. write_file and edit_file refuse to
   * cross it; run_command is measured after each command (see docs/security-filesystem.md for what it cannot stop).
   * Also the quota of each sandboxed stdio MCP server's data directory (docs/mcp.md).
   */
  max_workspace_bytes: z
    .int()
    .positive()
    .nullable()
    .default(1024 * MiB),
  /**
   * With one workspace per principal (root ending in {principal}): delete a principal's workspace, with everything
   * in it, once no call used it for this many days (checked hourly); null: never.
   */
  expire_idle_days: z.number().positive().nullable().default(null),
  /**
   * When the gateway runs as root and the workspace belongs to another user, run the file tools in a worker
   * process with that user's identity (true), or in the gateway itself (false: one IPC round trip less per
   * call; the descriptor walk still confines them, but a flaw in it would act as root).
   */
  privilege_separation: z.boolean().default(true),
});
export type FsConfig = z.output<typeof FsConfig>;
