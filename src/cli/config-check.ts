/**
 * `a2e-gateway config check [--config FILE]`: validate a config as `serve`
 * would — the file, its plugins, the tools they offer, the policy rules, the
 * token variables — without listening, then print the effective config
 * (defaults filled in, `${NAME}` expanded, HOST/PORT applied) as YAML with
 * secrets masked. Exit 0 when the gateway would start, 2 when it would not.
 */
import { stringify } from 'yaml';
import { ConfigError, defineConfig, loadConfigFile, type GatewayConfig } from '../config/index.js';
import { createLogger, type LogLevel } from '../logger.js';
import { createGateway } from '../server.js';
import { parseOptions, UsageError } from './usage.js';

export const CONFIG_USAGE = `Usage: a2e-gateway config check [--config FILE]

Check a config as serve would (the file, its plugins and their tools, policy rules, token variables), without
listening, and print the effective config as YAML: defaults filled in, \${NAME} expanded, secrets masked.

Options:
  -c, --config FILE     YAML or JSON config file (env A2E_CONFIG; default: no file, the defaults)
  -h, --help            Show this help
Exit codes: 0 the gateway would start with it, 2 it would not (the message says why).
`;

interface ConfigIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
}

/** Keys whose values are secrets wherever they appear (values of `headers` and `env` maps are masked too). */
const SECRET_KEY = /secret|password|passwd|token|api_?key|authorization|credential/i;
const MASK = '***';

/** A copy of `value` with secret values replaced by "***"; `token_env` (a variable's name) stays. */
export function maskSecrets(value: unknown, key = '', inSecretMap = false): unknown {
  if (Array.isArray(value)) return value.map((v) => maskSecrets(v, key, false));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    const secretMap = key === 'headers' || key === 'env';
    for (const [k, v] of Object.entries(value)) out[k] = maskSecrets(v, k, secretMap);
    return out;
  }
  if (value === undefined || value === null || value === '') return value;
  if (inSecretMap || (SECRET_KEY.test(key) && key !== 'token_env')) return MASK;
  return value;
}

export async function runConfigCommand(argv: string[], env: NodeJS.ProcessEnv, io: ConfigIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '-h' || sub === '--help' || sub === 'help') {
    io.stdout.write(CONFIG_USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'check')
    throw new UsageError(`unknown config command "${sub}"; the one there is: a2e-gateway config check [--config FILE]`);
  const { values } = parseOptions('config check', rest, {
    config: { type: 'string', short: 'c' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.stdout.write(CONFIG_USAGE);
    return 0;
  }
  const file = values.config ?? env.A2E_CONFIG;
  const loaded: GatewayConfig = file ? await loadConfigFile(file, env) : defineConfig();
  const config: GatewayConfig = {
    ...loaded,
    server: {
      ...loaded.server,
      host: env.HOST ?? loaded.server.host,
      port: env.PORT && /^\d+$/.test(env.PORT) ? Number(env.PORT) : loaded.server.port,
    },
  };
  const level = (env.LOG_LEVEL ?? 'warn').toLowerCase() as LogLevel;
  const logger = createLogger(level, { pretty: io.stderr.isTTY === true });
  let tools: number;
  try {
    // The same start-up as serve, short of listening: plugins load, tools are listed, rules and tokens checked.
    const gateway = await createGateway({ config, logger, env });
    tools = gateway.registry.all().length;
    await gateway.close();
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError((err as Error).message);
  }
  io.stdout.write(`# effective config${file ? ` of ${file}` : ' (no file: the defaults)'}; secrets masked\n`);
  io.stdout.write(stringify(maskSecrets(config)));
  io.stderr.write(
    `a2e-gateway: config OK${file ? ` (${file})` : ''}: the gateway would start with ${tools} tool${tools === 1 ? '' : 's'}\n`,
  );
  return 0;
}
