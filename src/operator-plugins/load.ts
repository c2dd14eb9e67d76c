/**
 * Operators' own tools: the modules listed under `plugins` in the config.
 * A module exports a ToolPlugin, or a factory `(options, { logger }) => ToolPlugin`
 * (sync or async), as its default export or as `plugin`. Anything else is a
 * start-up error naming the module and saying what it should export.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../utils/config-error.js';
import type { Logger, ToolPlugin } from '../engine/index.js';
import { nativeImport } from '../native-import.js';
import { isPath, type PluginEntry } from './config.js';

import type { PluginFactory } from './factory.js';

export type { PluginFactory, PluginFactoryContext } from './factory.js';

const CONTRACT =
  'export a ToolPlugin ({ name, listTools(), executeTool() }) or a factory function returning one, as the default export or as "plugin"';

/** Import and build every configured plugin, in order. */
export async function loadConfiguredPlugins(entries: readonly PluginEntry[], logger: Logger): Promise<ToolPlugin[]> {
  const plugins: ToolPlugin[] = [];
  for (const [i, entry] of entries.entries()) {
    const label = `plugins[${i}] (module ${JSON.stringify(entry.module)})`;
    let mod: Record<string, unknown>;
    try {
      mod = await nativeImport(isPath(entry.module) ? pathToFileURL(resolve(entry.module)).href : entry.module);
    } catch (err) {
      throw new ConfigError(`${label} failed to load: ${whyNotLoaded(entry.module, err as Error & { code?: string })}`);
    }
    const exported = mod.default ?? mod.plugin;
    let plugin: unknown = exported;
    if (typeof exported === 'function') {
      try {
        plugin = await (exported as PluginFactory)(entry.options, {
          logger: logger.child({ plugin_module: entry.module }),
        });
      } catch (err) {
        throw new ConfigError(`${label}: its plugin factory failed: ${(err as Error).message}`);
      }
    } else if (Object.keys(entry.options).length > 0 && exported !== undefined) {
      throw new ConfigError(
        `${label} has options but exports a plugin object, not a factory; export a function (options) => plugin`,
      );
    }
    const problem = contractProblem(plugin);
    if (problem) throw new ConfigError(`${label} does not provide a valid plugin (${problem}); ${CONTRACT}`);
    plugins.push(plugin as ToolPlugin);
  }
  return plugins;
}

/**
 * Why `import(spec)` failed, in words that say what to fix. Node's messages
 * name the importing file too ("… imported from /x/plugin.js"), so which
 * module is missing is read from them, not guessed from the text.
 */
export function whyNotLoaded(spec: string, err: Error & { code?: string }): string {
  const first = err.message.split('\n')[0]!;
  if (err.code === 'ERR_MODULE_NOT_FOUND') {
    const m = /^Cannot find (package|module) '([^']+)' imported from (.+)$/.exec(first);
    const missing = m?.[2] ?? '';
    const from = m?.[3] ?? '';
    const isEntry = !isPath(spec)
      ? missing === spec
      : missing === resolve(spec) || pathToFileURL(resolve(spec)).href === missing;
    if (isEntry || !m) {
      return isPath(spec)
        ? `no such file: ${resolve(spec)} (a relative path is taken from the config file's folder)`
        : `package "${spec}" is not installed where the gateway runs; npm install it, or give the plugin's file path`;
    }
    if (m[1] === 'package') {
      const pkg = packageName(missing);
      const gatewayHint =
        pkg === 'a2e-gateway'
          ? ' (or import from nothing: throw an Error whose name is "ToolError" — see docs/writing-plugins.md)'
          : '';
      return `it imports package "${pkg}", which is not installed for ${from}: run npm install ${pkg} in the plugin's folder${gatewayHint}`;
    }
    return `it imports ${missing}, which does not exist (imported from ${from})`;
  }
  if (
    err.name === 'SyntaxError' &&
    /Cannot use import statement outside a module|Unexpected token 'export'/.test(first)
  ) {
    return (
      `it uses import/export, but Node loads it as CommonJS (${first}): name the file .mjs, or add "type": "module" ` +
      'to the package.json next to it (or the nearest one above it)'
    );
  }
  if (/(require|module|exports) is not defined in ES module scope/.test(first)) {
    return `it is CommonJS (require/module.exports), but Node loads it as an ES module (${first}): name the file .cjs, or write it with import/export`;
  }
  return first;
}

/** "@scope/name/sub" → "@scope/name"; "name/sub" → "name". */
const packageName = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

function contractProblem(p: unknown): string | undefined {
  if (p === undefined) return 'nothing exported';
  if (p === null || typeof p !== 'object') return `got ${p === null ? 'null' : typeof p}`;
  const o = p as Record<string, unknown>;
  if (typeof o.name !== 'string' || o.name === '') return '"name" must be a non-empty string';
  if (typeof o.listTools !== 'function') return '"listTools" must be a function';
  if (typeof o.executeTool !== 'function') return '"executeTool" must be a function';
  for (const key of ['searchTools', 'start', 'stop'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'function') return `"${key}" must be a function when present`;
  }
  return undefined;
}
