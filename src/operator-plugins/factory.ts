/** The shape of a plugin module's factory export (types only, so `a2e-gateway/plugin` can offer them without anything else). */
import type { Logger, ToolPlugin } from '../engine/plugin.js';

/** What a plugin factory gets besides its options. */
export interface PluginFactoryContext {
  logger: Logger;
}
export type PluginFactory = (
  options: Record<string, unknown>,
  ctx: PluginFactoryContext,
) => ToolPlugin | Promise<ToolPlugin>;
