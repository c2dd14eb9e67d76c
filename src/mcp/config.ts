/**
 * The `mcp` config section: MCP servers whose tools the gateway offers
 * (`mcp.servers`) and the gateway's own MCP door at /mcp (`mcp.serve`).
 */
import { z } from 'zod';
import { CredentialConfig } from '../security/credential-config.js';

const ServerCommon = {
  /** Offer this server's tools (a disabled server is listed in GET /mcp-servers and not started). */
  enabled: z.boolean().default(true),
  /** Longest one call may run on this server, ms; the call's own timeout still applies when it is shorter. */
  timeout_ms: z.int().positive().default(300_000),
  /** Only these tools of the server (its own names, before prefixing); all when absent. */
  tools: z.array(z.string().min(1)).optional(),
  /** Re-list the server's tools every this many seconds (for servers that change them without notifications/tools/list_changed); never when absent. */
  refresh_s: z.int().positive().optional(),
};

/** A host path mounted in a sandboxed server: read-only, or writable with `rw: true`. */
const Mount = z.strictObject({
  /** Host path, mounted at the same path. */
  path: z.string().min(1),
  /** Writable by the server (default read-only). */
  rw: z.boolean().default(false),
});

/** One MCP server: a command to spawn (stdio) or a Streamable HTTP URL. */
export const McpServerConfig = z
  .strictObject({
    /** Program to run for a stdio server (an installed package's bin, or a path). */
    command: z.string().min(1).optional(),
    /** Arguments of `command`. */
    args: z.array(z.string()).default(() => []),
    /** Extra environment for the process (on top of a minimal PATH/HOME/LANG; the gateway's own is not passed). */
    env: z.record(z.string(), z.string()).default(() => ({})),
    /** Working directory of the process (in the sandbox: its data directory, /workspace, when absent). */
    cwd: z.string().min(1).optional(),
    /** Run the process in the bubblewrap sandbox (default: true where one can be made, see docs/mcp.md). */
    sandbox: z.boolean().optional(),
    /** Inside the sandbox: allow network access (`npx -y` fetching a package needs it). */
    network: z.boolean().default(false),
    /**
     * Inside the sandbox: extra host paths the server needs, at the same path; read-only, unless given as
     * `{ path, rw: true }` (e.g. the directory server-filesystem serves).
     */
    mounts: z.array(z.union([z.string().min(1), Mount])).default(() => []),
    /**
     * Inside the sandbox: the server's own persistent, writable directory (its /workspace, HOME and default working
     * directory), with the quota tools.fs.max_workspace_bytes; `<server.state_dir>/mcp/<id>` when absent. Created at
     * start; kept across restarts.
     */
    data_dir: z.string().min(1).optional(),
    /** URL of a Streamable HTTP server. */
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL of the MCP endpoint' }).optional(),
    /** Sent with every request to `url` (values are never logged). */
    headers: z.record(z.string(), z.string()).default(() => ({})),
    /**
     * A stdio server only: run one instance per principal (token name or JWT principal; docs/tenants.md), each with
     * its own data directory below this server's, started on the principal's first call, so a stateful server (a
     * memory graph, a browser) keeps each principal's state apart. Its tools are listed once.
     */
    per_principal: z.boolean().default(false),
    /** per_principal: stop a principal's instance after this many seconds without a call (its data directory stays). */
    idle_s: z.int().positive().default(600),
    /**
     * per_principal: most instances running at once. A new principal's first call stops the least recently used
     * idle one; when every one is busy it is refused with a retryable error.
     */
    max_instances: z.int().positive().default(16),
    /** A credential the gateway adds to every request to `url` (as openapi.sources.<id>.auth; an OAuth2 token is renewed once on a 401). */
    auth: CredentialConfig.optional(),
    ...ServerCommon,
  })
  .superRefine((s, ctx) => {
    if (s.per_principal && s.url !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message:
          'per_principal needs a stdio server ("command"): the gateway cannot start instances of a server at a URL',
      });
    }
    if (s.per_principal && s.sandbox === false) {
      ctx.addIssue({
        code: 'custom',
        message:
          "per_principal needs the sandbox: unconfined instances would share the host's files (and each other's state); remove sandbox: false",
      });
    }
    if ((s.command === undefined) === (s.url === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'give either "command" (a stdio server) or "url" (a Streamable HTTP server), not both or neither',
      });
    }
    if (s.auth !== undefined && s.url === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['auth'],
        message: '"auth" is for a server at a "url"; give a stdio server its secrets in "env"',
      });
  });
export type McpServerConfig = z.output<typeof McpServerConfig>;

/** The gateway's own MCP server at /mcp. */
export const McpServeConfig = z.strictObject({
  /** Serve POST /mcp (Streamable HTTP). */
  enabled: z.boolean().default(true),
  /** Tools per tools/list page. */
  page_size: z.int().positive().max(10_000).default(200),
  /** Timeout of every tools/call, seconds (MCP requests carry none); server.max_timeout_s when absent. */
  timeout_s: z.int().positive().optional(),
});
export type McpServeConfig = z.output<typeof McpServeConfig>;

export const McpConfig = z.strictObject({
  /** Server id (used in tool names and GET /mcp-servers) → server. */
  servers: z.record(z.string().min(1), McpServerConfig).default(() => ({})),
  serve: McpServeConfig.prefault({}),
  /** Longest the gateway waits for the servers at start before it listens, ms; slower ones join when ready. */
  start_wait_ms: z.int().min(0).default(5000),
  /** Longest a server may take to answer initialize and tools/list, ms. */
  connect_timeout_ms: z.int().positive().default(15_000),
  /** Restart backoff of a stdio server that exited: first delay, doubling up to `restart_max_ms`. */
  restart_min_ms: z.int().positive().default(500),
  /** Longest restart backoff, ms. */
  restart_max_ms: z.int().positive().default(30_000),
  /**
   * Largest message read from an MCP server, bytes (a stdio line, an SSE event, a JSON answer), counted before it
   * is buffered. A larger answer fails its own call, saying so; anything else over it is skipped.
   */
  max_message_bytes: z
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
});
export type McpConfig = z.output<typeof McpConfig>;
