import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';

/** One entry of the top-level `plugins` list: a module exporting a ToolPlugin (or a factory of one). */
export const PluginEntry = z.strictObject({
  /** Path of the module: relative paths are resolved against the config file's folder; bare names are packages. */
  module: z.string().min(1),
  /** Handed to the module's factory function, when it exports one. */
  options: z.record(z.string(), z.unknown()).default(() => ({})),
});
export type PluginEntry = z.output<typeof PluginEntry>;

export const PluginsConfig = z.array(PluginEntry);
export type PluginsConfig = z.output<typeof PluginsConfig>;

/** Is `spec` a file path (as opposed to a package name)? */
export const isPath = (spec: string): boolean => spec.startsWith('.') || isAbsolute(spec);

/** Resolve the relative module paths of `entries` against `baseDir` (the config file's folder). */
export function resolvePluginPaths(entries: readonly PluginEntry[], baseDir: string): PluginEntry[] {
  return entries.map((e) => (isPath(e.module) ? { ...e, module: resolve(baseDir, e.module) } : e));
}
