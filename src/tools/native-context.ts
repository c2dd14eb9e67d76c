/** What the native tool groups share, built once by `nativePlugins` (src/tools/index.ts) and handed to each. */
import type { Logger } from '../engine/index.js';
import type { WorkspaceQuota } from './fs/quota.js';
import type { Workspace } from './fs/workspace.js';

export interface NativeContext {
  /** Absolute path of the workspace root (tools.fs.root resolved against the working directory). */
  workspace: string;
  /** The workspace opened by descriptors, shared by the file tools and the shell (each plugin init()s and close()s it). */
  files: Workspace;
  /** tools.fs.max_workspace_bytes, enforced by the file tools and at run_command's boundaries. */
  quota: WorkspaceQuota;
  logger: Logger;
  /** Where the credentials' `*_env` are looked up (tools.http.credentials). */
  env: NodeJS.ProcessEnv;
}
