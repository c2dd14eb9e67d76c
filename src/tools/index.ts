/**
 * The native tool groups (files, shell, HTTP, code evaluation), built from
 * the `tools` config section. Each group lives in its own folder.
 */
import { resolve } from 'node:path';
import type { Logger, ToolPlugin } from '../engine/index.js';
import type { ToolsConfig } from './config.js';
import { fsPlugin } from './fs/plugin.js';
import { httpPlugin } from './http/plugin.js';
import { shellPlugin } from './shell/plugin.js';
import { WorkspaceQuota } from './fs/quota.js';
import { Workspace } from './fs/workspace.js';
import { evalPlugin } from './eval/plugin.js';
import type { NativeContext } from './native-context.js';

export type { NativeContext } from './native-context.js';

export function nativePlugins(tools: ToolsConfig, logger: Logger, env: NodeJS.ProcessEnv = process.env): ToolPlugin[] {
  const files = new Workspace(resolve(tools.fs.root));
  const ctx: NativeContext = { workspace: files.root, files, quota: new WorkspaceQuota(files, tools.fs.max_workspace_bytes), logger, env };
  const plugins: ToolPlugin[] = [];
  void ctx;

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
