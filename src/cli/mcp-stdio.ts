/**
 * `a2e-gateway mcp-stdio [--config FILE] [--port PORT [--host HOST]]`: the whole gateway (same config, plugins,
 * policy, audit) behind the MCP door on stdin/stdout. It listens on HTTP only when given --port: then the console
 * and /admin/approvals are there too, so a person can decide the stdio client's calls that wait for approval.
 * Logs (and the listening line) go to stderr only; stdout carries only protocol messages.
 */
import { defineConfig, loadConfigFile, type GatewayConfig } from '../config/index.js';
import { createLogger, type LogLevel } from '../logger.js';
import { McpDoor } from '../mcp-server/door.js';
import { serveMcpStdio } from '../mcp-server/stdio.js';
import { traceCallsAsRoots } from '../observability/tracing.js';
import { createGateway, VERSION } from '../server.js';
import { bindError } from './bind-error.js';
import { parseOptions, parsePort } from './usage.js';

const MCP_STDIO_USAGE = `Usage: a2e-gateway mcp-stdio [options]

Serve the gateway's tools as an MCP server on stdin/stdout (for desktop MCP clients that launch it).

Options:
  -c, --config FILE     YAML or JSON config file (env A2E_CONFIG)
  -p, --port PORT       Also listen on HTTP (0 = any free port): the console and /admin/approvals, where a person
                        decides the calls that wait for approval. Without it, nothing listens
      --host HOST       Interface for --port (default server.host, 127.0.0.1)
  -h, --help            Show this help

Environment: LOG_LEVEL (default warn); logs and the listening line go to stderr, stdout carries only MCP messages.
`;

export async function runMcpStdio(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseOptions('mcp-stdio', argv, {
    config: { type: 'string', short: 'c' },
    host: { type: 'string' },
    port: { type: 'string', short: 'p' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(MCP_STDIO_USAGE);
    return;
  }
  // Parsed before anything starts: a wrong port is a usage error, not a half-started gateway.
  const port = values.port === undefined ? undefined : parsePort(values.port, '--port');
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
  if (port !== undefined) {
    // Not PORT from the environment: a desktop client's environment should not open a port by accident.
    const host = values.host ?? config.server.host;
    const address = await gateway.listen(port, host).catch(async (err: unknown) => {
      await gateway.close();
      throw bindError(err, host, port);
    });
    process.stderr.write(`a2e-gateway listening on ${address.url}\n`);
  }
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
