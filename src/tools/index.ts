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

export function nativePlugins(tools: ToolsConfig, logger: Logger): ToolPlugin[] {
  const ctx: NativeContext = { workspaces: new Workspaces(tools.fs.root, () => tools.fs.max_workspace_bytes), logger };
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
