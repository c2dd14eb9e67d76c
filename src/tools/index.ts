/**
 * The native tool groups (files, shell, HTTP, code evaluation), built from
 * the `tools` config section. Each group lives in its own folder.
 */
import type { Logger, ToolPlugin } from '../engine/index.js';
import type { ToolsConfig } from './config.js';
import { fsPlugin } from './fs/plugin.js';
import { httpPlugin } from './http/plugin.js';
import { shellPlugin } from './shell/plugin.js';
import { Workspaces } from './fs/workspaces.js';
import { evalPlugin } from './eval/plugin.js';
import type { NativeContext } from './native-context.js';

export type { NativeContext } from './native-context.js';
export type { Workspaces, WorkspaceUsage } from './fs/workspaces.js';

/**
 * `env`: where credentials' `*_env` are looked up. `quotaOf`: a principal's own workspace quota (its token's
 * quota_bytes), when it has one; else tools.fs.max_workspace_bytes applies. Used only with one workspace per principal.
 */
export function nativePlugins(
  tools: ToolsConfig,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
  quotaOf: (principal: string | null) => number | undefined = () => undefined,
): ToolPlugin[] {
  const workspaces = new Workspaces(
    tools.fs.root,
    (principal) => quotaOf(principal) ?? tools.fs.max_workspace_bytes,
    tools.fs.expire_idle_days,
  );
  const ctx: NativeContext = { workspaces, logger, env };
  const plugins: ToolPlugin[] = [];

  // files (tools.fs)
  if (tools.fs.enabled) plugins.push(fsPlugin(tools.fs, ctx));

  // shell (tools.shell)
  if (tools.shell.enabled) plugins.push(shellPlugin(tools.shell, ctx));

  // http (tools.http)
  if (tools.http.enabled) plugins.push(httpPlugin(tools.http, ctx));

  // eval (tools.eval)
  if (tools.eval.enabled) plugins.push(evalPlugin(tools.eval, ctx));

  return plugins;
}

/** The workspaces the native tools of `plugins` work in (undefined when neither the file tools nor the shell is on). */
export function workspacesOf(plugins: readonly ToolPlugin[]): Workspaces | undefined {
  for (const p of plugins) {
    const w = (p as { workspaces?: unknown }).workspaces;
    if (w instanceof Workspaces) return w;
  }
  return undefined;
}
