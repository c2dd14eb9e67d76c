/**
 * `a2e-gateway mcp-stdio [--config FILE]`: the whole gateway (same config, plugins,
 * policy, audit) behind the MCP door on stdin/stdout, without listening on HTTP.
 * Logs go to stderr only; stdout carries only protocol messages.
 */
import { parseArgs } from 'node:util';
import { defineConfig, loadConfigFile, type GatewayConfig } from '../config/index.js';
import { createLogger, type LogLevel } from '../logger.js';
import { McpDoor } from '../mcp-server/door.js';
import { serveMcpStdio } from '../mcp-server/stdio.js';
import { traceCallsAsRoots } from '../observability/tracing.js';
import { createGateway, VERSION } from '../server.js';

export async function runMcpStdio(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { config: { type: 'string', short: 'c' } },
    strict: true,
    allowPositionals: false,
  });
  const configFile = values.config ?? env.A2E_CONFIG;
  const config: GatewayConfig = configFile ? await loadConfigFile(configFile, env) : defineConfig();
  // Quieter than serve by default: a desktop client shows stderr to its user.
  const logger = createLogger(((env.LOG_LEVEL ?? 'warn').toLowerCase() as LogLevel) || 'warn', { pretty: false });
  traceCallsAsRoots(); // no HTTP request decides for a call here: each samples as a trace of its own
  const gateway = await createGateway({ config, logger, env });
  const door = new McpDoor({
    engine: gateway.engine,
    version: VERSION,
    pageSize: config.mcp.serve.page_size,
    callTimeoutS: config.mcp.serve.timeout_s ?? config.server.max_timeout_s,
  });
  const stop = () => void gateway.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  logger.info({ tools: gateway.registry.all().length, version: VERSION }, 'MCP server on stdio started');
  await serveMcpStdio({
    door,
    input: process.stdin,
    output: process.stdout,
    logger,
    caller: { sessionId: '', principal: null },
    maxLineBytes: config.server.body_limit_bytes,
    maxJsonDepth: config.limits.max_json_depth,
  });
  await gateway.close();
}
