#!/usr/bin/env node
/**
 * The a2e-gateway command.
 *   a2e-gateway serve [--config FILE] [--host H] [--port N]
 *   a2e-gateway config check [--config FILE]
 * Environment: A2E_CONFIG, HOST, PORT, LOG_LEVEL.
 *
 * Each command loads only what it needs: the client commands (list, call)
 * never load the server, and serve loads it when it runs (dynamic imports).
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from './cli/usage.js';
import { useCompileCache } from './compile-cache.js';
import { similarNames } from './utils/similar.js';
import { VERSION } from './version.js';

const COMMANDS = ['serve', 'config', 'mcp-stdio', 'openapi', 'list', 'call', 'help'];

// The client commands' module (and its HTTP client) is imported for list, call and help only, not for serve.
const usage = (CLIENT_USAGE: string) => `Usage: a2e-gateway <command> [options]

Commands:
  serve                 Run the gateway (a2e-gateway serve --help for its options)
  config check          Check a config (loads its plugins, as serve would) and print the effective config,
                        secrets masked
  mcp-stdio             Serve the gateway's tools as an MCP server on stdin/stdout (for desktop MCP clients)
  openapi [--out FILE]  Print (or write) the gateway's OpenAPI document
  list, call            Talk to a running gateway (below)

Options for serve and mcp-stdio:
  -c, --config FILE     YAML or JSON config file (env A2E_CONFIG)
      --host HOST       Interface to bind (env HOST; default 127.0.0.1)
  -p, --port PORT       Port to bind, 0 = any free port (env PORT; default 8080). mcp-stdio listens on HTTP
                        only when given --port (the console and /admin/approvals, beside stdio)

  -h, --help            Show this help
  -v, --version         Show the version

${CLIENT_USAGE}
Environment: LOG_LEVEL = trace|debug|info|warn|error|silent (default info); logs go to stderr as JSON lines,
  human-readable when stderr is a terminal (LOG_FORMAT=json|pretty to choose).
`;

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      // The process is `node`: named after the command, `pidof a2e-gateway` finds it (docs/reload.md's kill -HUP).
      process.title = 'a2e-gateway';
      return (await import('./cli/serve.js')).serve(rest, process.env);
    case 'openapi':
      return (await import('./cli/serve.js')).openapi(rest);
    case 'config': {
      const { runConfigCommand } = await import('./cli/config-check.js');
      process.exitCode = await runConfigCommand(rest, process.env, { stdout: process.stdout, stderr: process.stderr });
      return;
    }
    case 'mcp-stdio':
      return (await import('./cli/mcp-stdio.js')).runMcpStdio(rest, process.env);
    case 'list':
    case 'call': {
      const { runClientCommand } = await import('./cli/client.js');
      process.exitCode = await runClientCommand(command, rest, process.env, {
        stdout: process.stdout,
        stderr: process.stderr,
      });
      return;
    }
    case '-v':
    case '--version':
      process.stdout.write(`${VERSION}\n`);
      return;
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(usage((await import('./cli/client.js')).CLIENT_USAGE));
      return;
    default: {
      const close = similarNames(command, COMMANDS, 1);
      throw new UsageError(
        `unknown command "${command}"${close.length ? `; did you mean "${close[0]}"?` : ''} (run a2e-gateway --help for the commands)`,
      );
    }
  }
}

// Every command's code after this line (its dynamic imports) is compiled with what the last run cached.
const compileCache = useCompileCache(dirname(fileURLToPath(import.meta.url)));

main(process.argv.slice(2)).then(
  () => {
    // serve returns once the gateway listens, every other command as it ends: either way what it compiled is
    // what the next start needs (written only when there was no usable cache: after a build or a Node upgrade).
    compileCache.save();
  },
  (err: unknown) => {
    // ConfigError by name: its module belongs to the server side, which a client command never loads.
    const usage = err instanceof UsageError || (err as Error).name === 'ConfigError';
    process.stderr.write(`a2e-gateway: ${(err as Error).message}\n`);
    process.exit(usage ? 2 : 1);
  },
);
