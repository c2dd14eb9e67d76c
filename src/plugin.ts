/**
 * `a2e-gateway/plugin`: what a plugin module needs from the gateway, and
 * nothing else. No runtime dependencies (the two classes below and types), so
 * a plugin can import it cheaply, and a plugin that cannot import it at all
 * can throw any Error whose `name` is "ToolError" instead (see ToolError).
 */
export { ToolError } from './engine/errors.js';
export { ToolOutput } from './engine/plugin.js';
export type { Logger, LogFn, PluginHost, ToolContext, ToolPlugin, UnavailableTool } from './engine/plugin.js';
export type { PluginFactory, PluginFactoryContext } from './operator-plugins/factory.js';
export type {
  ToolDefinition,
  ToolDefinitionInput,
  ToolEventDataMap,
  ToolEventKind,
  ToolParameter,
} from './protocol/index.js';
