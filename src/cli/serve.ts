/**
 * `a2e-gateway serve` and `a2e-gateway openapi`: the commands that build a
 * gateway. Loaded by src/cli.ts only when one of them runs.
 */
import { writeFile } from 'node:fs/promises';
import { defineConfig, loadConfigFile, type GatewayConfig } from '../config/index.js';
import { createLogger, type LogLevel } from '../logger.js';
import { createGateway, openApiFor, VERSION } from '../server.js';
import { parseOptions, UsageError } from './usage.js';

const SERVE_USAGE = `Usage: a2e-gateway serve [options]

Run the gateway.

Options:
  -c, --config FILE     YAML or JSON config file (env A2E_CONFIG)
      --host HOST       Interface to bind (env HOST; default 127.0.0.1)
  -p, --port PORT       Port to bind, 0 = any free port (env PORT; default 8080)
  -h, --help            Show this help

Environment: LOG_LEVEL = trace|debug|info|warn|error|silent (default info); logs go to stderr as JSON lines,
  human-readable when stderr is a terminal (LOG_FORMAT=json|pretty to choose).
`;

const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function parsePort(value: string, source: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new UsageError(`${source} must be a port number from 0 to 65535, got "${value}"`);
  return port;
}

export async function serve(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseOptions('serve', argv, {
    config: { type: 'string', short: 'c' },
    host: { type: 'string' },
    port: { type: 'string', short: 'p' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(SERVE_USAGE);
    return;
  }
  const level = (env.LOG_LEVEL ?? 'info').toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(level)) throw new UsageError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);

  const configFile = values.config ?? env.A2E_CONFIG;
  const config: GatewayConfig = configFile ? await loadConfigFile(configFile, env) : defineConfig();
  const host = values.host ?? env.HOST ?? config.server.host;
  const port =
    values.port !== undefined
      ? parsePort(values.port, '--port')
      : env.PORT
        ? parsePort(env.PORT, 'PORT')
        : config.server.port;

  const format = (env.LOG_FORMAT ?? '').toLowerCase();
  if (!['', 'json', 'pretty'].includes(format)) throw new UsageError(`LOG_FORMAT must be json or pretty, got "${env.LOG_FORMAT}"`);
  const logger = createLogger(level, { pretty: format === 'pretty' || (format === '' && process.stderr.isTTY === true) });
  const gateway = await createGateway({ config: { ...config, server: { ...config.server, host, port } }, logger, env });
  // Signal handlers go in before the listening line is printed: a supervisor may signal right after it.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, running_calls: gateway.engine.running }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  let address;
  try {
    address = await gateway.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    await gateway.close();
    if (code === 'EADDRINUSE') throw new Error(`port ${port} on ${host} is already in use; pick another with --port`);
    if (code === 'EADDRNOTAVAIL') throw new Error(`cannot bind to ${host}: no such local address; check --host`);
    if (code === 'EACCES') throw new Error(`not allowed to bind ${host}:${port}; use a port above 1023`);
    throw err;
  }
  process.stdout.write(`a2e-gateway listening on ${address.url}\n`);
  logger.info({ url: address.url, tools: gateway.registry.all().length, version: VERSION }, 'gateway started');
}

export async function openapi(argv: string[]): Promise<void> {
  const { values } = parseOptions('openapi', argv, { out: { type: 'string', short: 'o' } });
  const text = `${JSON.stringify(openApiFor(defineConfig()), null, 2)}\n`;
  if (values.out) await writeFile(values.out, text);
  else process.stdout.write(text);
}

