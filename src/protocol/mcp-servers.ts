import { z } from 'zod';
import { contributedTools, isoTimeOrNull, lastError, sourceStatusList } from './source-status.js';

/** One configured MCP server's state, as GET /mcp-servers reports it. */
export const McpServerStatus = z
  .object({
    id: z
      .string()
      .meta({ description: 'The server id from the config (mcp.servers.<id>); the prefix of its tool names' }),
    transport: z
      .enum(['stdio', 'http'])
      .meta({ description: 'stdio: a process the gateway runs; http: a Streamable HTTP endpoint' }),
    sandboxed: z.boolean().meta({ description: 'A stdio server running in the bubblewrap sandbox' }),
    target: z.string().meta({ description: 'The command (stdio) or the URL (http, without credentials)' }),
    state: z.enum(['disabled', 'starting', 'ready', 'restarting', 'failed', 'stopped']).meta({
      description:
        'ready: tools can be called; starting: the first start is running; restarting: it went away (a process exited, an HTTP ' +
        "server's connection or session was lost) and is started again " +
        '(its tools stay listed, calls fail until it is back); failed: it never came up (retried with backoff); see last_error',
    }),
    server_name: z.string().nullable().meta({ description: "The server's own name (from initialize)" }),
    pid: z.int().nullable().meta({ description: 'Process id of a running stdio server' }),
    tools: contributedTools('Tools this server currently contributes (gateway names)'),
    skipped: z.array(z.object({ tool: z.string(), reason: z.string() })).meta({
      description: 'Tools left out: a name another source has, or an input schema that is not valid JSON Schema',
    }),
    restarts: z.int().min(0).meta({ description: 'How many times it was started again' }),
    last_error: lastError('Why it last failed'),
    last_started: isoTimeOrNull('When it was last started (ISO 8601)'),
  })
  .meta({ id: 'McpServerStatus', description: "An MCP server's state and tools" });
export type McpServerStatus = z.output<typeof McpServerStatus>;

export const McpServersResponse = sourceStatusList('servers', McpServerStatus, {
  id: 'McpServersResponse',
  description: 'Every configured MCP server, in configuration order',
});
export type McpServersResponse = z.output<typeof McpServersResponse>;
