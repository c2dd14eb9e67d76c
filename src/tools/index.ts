/**
 * The native tool groups (files, shell, HTTP, code evaluation), built from
 * the `tools` config section. Each group lives in its own folder and adds
 * one line here.
 */
import type { GatewayConfig } from '../config/index.js';
import type { Logger, ToolPlugin } from '../engine/index.js';

export function nativePlugins(_tools: GatewayConfig['tools'], _logger: Logger): ToolPlugin[] {
  const plugins: ToolPlugin[] = [];
  return plugins;
}
