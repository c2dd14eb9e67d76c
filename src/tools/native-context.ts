/** What the native tool groups share, built once by `nativePlugins` (src/tools/index.ts) and handed to each. */
import type { Logger } from '../engine/index.js';
import type { Workspaces } from './fs/workspaces.js';

export interface NativeContext {
  /**
   * The workspaces (tools.fs.root): one shared by every caller, or one per principal. Shared by the file tools and
   * the shell (each plugin init()s and close()s them); each tool call works in `workspaces.of(ctx.principal)`.
   */
  workspaces: Workspaces;
  logger: Logger;
  /** Where the credentials' `*_env` are looked up (tools.http.credentials). */
  env: NodeJS.ProcessEnv;
}
