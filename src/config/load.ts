/**
 * Reading the configuration: YAML or JSON file → ${ENV} expansion → zod.
 * Errors name the file and the key, and say what to change.
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { formatProblems, toProblems } from '../protocol/index.js';
import { GatewayConfig, type GatewayConfigInput } from './schema.js';
import { resolvePluginPaths } from '../plugins/config.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Replace `${NAME}` and `${NAME:-default}` in every string value with the
 * variable's value; `$${` stays a literal `${`. An unset variable without a
 * default is an error naming the key that uses it.
 */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path: string[] = []): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (whole, escaped, name, fallback) => {
      if (escaped) return whole.slice(1);
      const v = env[name as string];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback as string;
      throw new ConfigError(`${path.join('.') || '(root)'}: environment variable ${name} is not set; set it or write \${${name}:-default}`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, [...path, String(i)]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = expandEnv(v, env, [...path, k]);
    return out;
  }
  return value;
}

/**
 * Validate an already-parsed config object. `source` names it in errors;
 * with `env`, `${NAME}` references are expanded first.
 */
export function parseConfig(raw: unknown, options: { source?: string; env?: NodeJS.ProcessEnv } = {}): GatewayConfig {
  const source = options.source ?? 'config';
  let expanded: unknown = raw ?? {};
  if (options.env) {
    try {
      expanded = expandEnv(expanded, options.env);
    } catch (err) {
      if (err instanceof ConfigError) throw new ConfigError(`invalid config in ${source}: ${err.message}`);
      throw err;
    }
  }
  const r = GatewayConfig.safeParse(expanded, { reportInput: true });
  if (!r.success) {
    throw new ConfigError(`invalid config in ${source}: ${formatProblems(toProblems(r.error.issues))}`);
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
  try {
    raw = parseYaml(text, { prettyErrors: true });
  } catch (err) {
    throw new ConfigError(`config file ${file} is not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (raw !== null && raw !== undefined && (typeof raw !== 'object' || Array.isArray(raw))) {
    throw new ConfigError(`config file ${file} must hold a mapping of sections (server, tools, …), not a ${Array.isArray(raw) ? 'list' : typeof raw}`);
  }
  const config = parseConfig(raw, { source: file, env });
  // Plugin modules are named relative to the config file, wherever the gateway is started from.
  return { ...config, plugins: resolvePluginPaths(config.plugins, dirname(file)) };
}

/** A config from defaults plus an object (for tests and embedding); no ${ENV} expansion. */
export const defineConfig = (input: GatewayConfigInput = {}): GatewayConfig =>
  parseConfig(input, { source: 'config object' });
