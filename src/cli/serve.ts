/**
 * `a2e-gateway serve` and `a2e-gateway openapi`: the commands that build a
 * gateway. Loaded by src/cli.ts only when one of them runs.
 */
import { writeFile } from 'node:fs/promises';
import { defineConfig, loadConfigFile, type GatewayConfig } from '../config/index.js';
import { createLogger, type LogLevel } from '../logger.js';
import { createGateway, openApiFor, VERSION } from '../server.js';
import { bindError } from './bind-error.js';
import { parseOptions, parsePort, UsageError } from './usage.js';
import { isWorker, reportListening, runPrimary } from './workers.js';
import { parseWorkers, workerCount, type Workers } from '../config/workers.js';

const SERVE_USAGE = `Usage: a2e-gateway serve [options]

Run the gateway.

Options:
  -c, --config FILE     YAML or JSON config file (env A2E_CONFIG)
      --host HOST       Interface to bind (env HOST; default 127.0.0.1)
  -p, --port PORT       Port to bind, 0 = any free port (env PORT; default 8080)
  -w, --workers N|auto  Gateway processes sharing the port (env A2E_WORKERS; default server.workers, 1);
                        more than 1 needs store.kind: redis
  -h, --help            Show this help

Environment: LOG_LEVEL = trace|debug|info|warn|error|silent (default info); logs go to stderr as JSON lines,
  human-readable when stderr is a terminal (LOG_FORMAT=json|pretty to choose).
`;

const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function parseWorkersOption(value: string, source: string): Workers {
  try {
    return parseWorkers(value, source);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export async function serve(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseOptions('serve', argv, {
    config: { type: 'string', short: 'c' },
    host: { type: 'string' },
    port: { type: 'string', short: 'p' },
    workers: { type: 'string', short: 'w' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(SERVE_USAGE);
    return;
  }
  const envLevel = env.LOG_LEVEL?.toLowerCase() as LogLevel | undefined;
  if (envLevel !== undefined && !LOG_LEVELS.includes(envLevel))
    throw new UsageError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);

  const configFile = values.config ?? env.A2E_CONFIG;
  const config: GatewayConfig = configFile ? await loadConfigFile(configFile, env) : defineConfig();
  const level = envLevel ?? config.log.level ?? 'info';
  const hostOption = values.host ?? env.HOST;
  const portOption =
    values.port !== undefined ? parsePort(values.port, '--port') : env.PORT ? parsePort(env.PORT, 'PORT') : undefined;
  const host = hostOption ?? config.server.host;
  const port = portOption ?? config.server.port;
  // --host/--port and HOST/PORT win over the file, at start and on every reload.
  const withBind = (c: GatewayConfig): GatewayConfig => ({
    ...c,
    server: { ...c.server, host: hostOption ?? c.server.host, port: portOption ?? c.server.port },
  });

  const format = (env.LOG_FORMAT ?? '').toLowerCase();
  if (!['', 'json', 'pretty'].includes(format))
    throw new UsageError(`LOG_FORMAT must be json or pretty, got "${env.LOG_FORMAT}"`);
  const logger = createLogger(level, {
    pretty: format === 'pretty' || (format === '' && process.stderr.isTTY === true),
  });
  if (!isWorker()) {
    const workersValue = values.workers ?? env.A2E_WORKERS;
    const workers = workerCount(
      workersValue !== undefined
        ? parseWorkersOption(workersValue, values.workers !== undefined ? '--workers' : 'A2E_WORKERS')
        : config.server.workers,
    );
    if (workers > 1) {
      if (config.store.kind !== 'redis') {
        throw new UsageError(
          `${workers} worker processes need a store they share: set store.kind: redis (and store.url) in the config, or run one process (--workers 1)`,
        );
      }
      process.exitCode = await runPrimary({ count: workers, logger, out: process.stdout });
      return;
    }
  }
  const gateway = await createGateway({
    config: withBind(config),
    logger,
    env,
    loadConfig: configFile ? async () => withBind(await loadConfigFile(configFile, env)) : undefined,
  });
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
  // Re-read the config file; the reload logs what it changed or why it was refused.
  process.on('SIGHUP', () => void gateway.reload('SIGHUP'));

  let address;
  try {
    address = await gateway.listen();
  } catch (err) {
    await gateway.close();
    throw bindError(err, host, port);
  }
  if (isWorker()) reportListening(address.url);
  else process.stdout.write(`a2e-gateway listening on ${address.url}\n`);
  logger.info({ url: address.url, tools: gateway.registry.all().length, version: VERSION }, 'gateway started');
}

export async function openapi(argv: string[]): Promise<void> {
  const { values } = parseOptions('openapi', argv, { out: { type: 'string', short: 'o' } });
  const text = `${JSON.stringify(openApiFor(defineConfig()), null, 2)}\n`;
  if (values.out) await writeFile(values.out, text);
  else process.stdout.write(text);
}
