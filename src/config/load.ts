/**
 * Reading the configuration: YAML or JSON file → ${ENV} expansion → zod.
 * Errors name the file and the key, and say what to change.
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { describeIssue, formatProblems, typeOf } from '../protocol/index.js';
import { GatewayConfig, type GatewayConfigInput } from './schema.js';
import { suggestKey } from './key-suggestions.js';
import { resolvePluginPaths } from '../operator-plugins/config.js';

import { ConfigError } from '../utils/config-error.js';

export { ConfigError } from '../utils/config-error.js';

/**
 * Replace `${NAME}` and `${NAME:-default}` in every string value with the
 * variable's value; `$${` stays a literal `${`. An unset variable without a
 * default is an error naming the key that uses it. With `sources`, the dotted
 * path of every value that came from a variable is recorded with its names
 * (so a value that turns out wrong can be traced to the variable).
 */
export function expandEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path: string[] = [],
  sources?: Map<string, string[]>,
): unknown {
  if (typeof value === 'string') {
    const names: string[] = [];
    const out = value.replace(
      /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (whole, escaped, name, fallback) => {
        if (escaped) return whole.slice(1);
        names.push(name as string);
        const v = env[name as string];
        if (v !== undefined && v !== '') return v;
        if (fallback !== undefined) return fallback as string;
        throw new ConfigError(
          `${path.join('.') || '(root)'}: environment variable ${name} is not set; set it or write \${${name}:-default}`,
        );
      },
    );
    if (names.length > 0) sources?.set(path.join('.'), names);
    return out;
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, [...path, String(i)], sources));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = expandEnv(v, env, [...path, k], sources);
    return out;
  }
  return value;
}

/** The number or boolean a string from the environment spells, if it spells one. */
function scalarFromEnv(text: string): number | boolean | undefined {
  const t = text.trim();
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return Number(t);
  return undefined;
}

function setAt(root: unknown, path: readonly PropertyKey[], value: unknown): void {
  let node = root as Record<PropertyKey, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<PropertyKey, unknown>;
  node[path.at(-1)!] = value;
}

/** The alternatives of a failed union, in words: `auto | true | false`. */
function unionAlternatives(issue: z.core.$ZodIssueInvalidUnion): string | undefined {
  const words: string[] = [];
  const types: string[] = [];
  for (const branch of issue.errors) {
    if (branch.length !== 1 || branch[0]!.path.length !== 0) return undefined;
    const only = branch[0]!;
    if (only.code === 'invalid_value')
      words.push(...only.values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))));
    else if (only.code === 'invalid_type' && only.expected === 'boolean') types.push('true', 'false');
    else if (only.code === 'invalid_type') types.push(only.expected === 'array' ? 'a list' : `a ${only.expected}`);
    else return undefined;
  }
  const names = [...words, ...types];
  return names.length > 0 ? names.join(' | ') : undefined;
}

/** One config problem in words; a value that came from `${NAME}` says so. */
function describeConfigIssue(issue: z.core.$ZodIssue, sources: ReadonlyMap<string, string[]>): string {
  let message = describeIssue(issue);
  if (issue.code === 'unrecognized_keys') {
    // "Did you mean", as for CLI options: a typo of a key of that section, or a key that belongs in another one.
    const path = issue.path.map(String);
    const hints = issue.keys.flatMap((key) => {
      const hint = suggestKey(GatewayConfig, path, key);
      return hint ? [issue.keys.length === 1 ? hint : `"${key}": ${hint}`] : [];
    });
    if (hints.length > 0) message = `${message.replace(/; remove (it|them)$/, '')}; ${hints.join('; ')}`;
  }
  if (issue.code === 'invalid_union') {
    const alternatives = unionAlternatives(issue);
    if (alternatives)
      message = `must be ${alternatives}${issue.input === undefined ? '' : `, got ${typeOf(issue.input)}`}`;
  }
  const names = sources.get(issue.path.map(String).join('.'));
  if (names && ['string', 'number', 'boolean'].includes(typeof issue.input)) {
    message += ` (the value ${JSON.stringify(issue.input)} comes from environment variable${names.length > 1 ? 's' : ''} ${names.join(', ')})`;
  }
  return message;
}

/**
 * A config is parsed once (at start, on a reload): without zod's JIT, which would first compile a parser for each
 * object schema in it, used once (the same checks and issues).
 */
const PARSE_ONCE = { reportInput: true, jitless: true } as const;

/**
 * Validate an already-parsed config object. `source` names it in errors;
 * with `env`, `${NAME}` references are expanded first, and a value that came
 * from a variable where the schema wants a number or a boolean is read as one
 * (`port: ${PORT}`).
 */
export function parseConfig(raw: unknown, options: { source?: string; env?: NodeJS.ProcessEnv } = {}): GatewayConfig {
  const source = options.source ?? 'config';
  let expanded: unknown = raw ?? {};
  const sources = new Map<string, string[]>();
  if (options.env) {
    try {
      expanded = expandEnv(expanded, options.env, [], sources);
    } catch (err) {
      if (err instanceof ConfigError) throw new ConfigError(`invalid config in ${source}: ${err.message}`);
      throw err;
    }
  }
  let r = GatewayConfig.safeParse(expanded, PARSE_ONCE);
  if (!r.success && sources.size > 0) {
    // Environment variables are strings: where one was refused, try the number or boolean it spells.
    let coerced = false;
    for (const issue of r.error.issues) {
      if (typeof issue.input !== 'string' || !sources.has(issue.path.map(String).join('.'))) continue;
      const scalar = scalarFromEnv(issue.input);
      if (scalar === undefined) continue;
      setAt(expanded, issue.path, scalar);
      coerced = true;
    }
    if (coerced) r = GatewayConfig.safeParse(expanded, PARSE_ONCE);
  }
  if (!r.success) {
    const problems = r.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.') || '(top level)',
      message: describeConfigIssue(issue, sources),
    }));
    throw new ConfigError(`invalid config in ${source}: ${formatProblems(problems)}`);
  }
  return r.data;
}

/** Read and validate a YAML or JSON config file. */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<GatewayConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT' ? `config file ${file} does not exist` : `cannot read config file ${file} (${code ?? 'error'})`,
    );
  }
  let raw: unknown;
  if (file.toLowerCase().endsWith('.json')) {
    // A .json file is JSON: read as YAML, a trailing comma or a stray character would be accepted silently.
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`config file ${file} is not valid JSON: ${(err as Error).message}`);
    }
  } else {
    try {
      // yaml is loaded here, when a config file is read: a gateway started without one never loads it.
      raw = (await import('yaml')).parse(text, { prettyErrors: true });
    } catch (err) {
      throw new ConfigError(`config file ${file} is not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (raw !== null && raw !== undefined && (typeof raw !== 'object' || Array.isArray(raw))) {
    throw new ConfigError(
      `config file ${file} must hold a mapping of sections (server, tools, …), not a ${Array.isArray(raw) ? 'list' : typeof raw}`,
    );
  }
  const config = parseConfig(raw, { source: file, env });
  // Plugin modules are named relative to the config file, wherever the gateway is started from.
  return { ...config, plugins: resolvePluginPaths(config.plugins, dirname(file)) };
}

/** A config from defaults plus an object (for tests and embedding); no ${ENV} expansion. */
export const defineConfig = (input: GatewayConfigInput = {}): GatewayConfig =>
  parseConfig(input, { source: 'config object' });
