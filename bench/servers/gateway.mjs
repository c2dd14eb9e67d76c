/**
 * The real gateway, built from this repo (dist/, `npm run build`), with the
 * bench tools registered through the public plugin API:
 *   echo   {text}  → {text}
 *   stream {count} → emits `count` progress events as fast as its reader takes them, then {count}
 *   hold   {ms}    → emits one status event, waits `ms` (or until stopped), then {held_ms}
 * BENCH_HEARTBEAT_S sets server.heartbeat_s (default 15); BENCH_WORKSPACE sets tools.fs.root (the
 * workspace of the native tools, e.g. the shell's run_command); BENCH_AGENT_CARD adds an A2A agent;
 * BENCH_MCP_URL adds a Streamable HTTP MCP server (id `peer`: its echo is `peer_echo`).
 * BENCH_HTTP_ALLOW (host:port) lets http_request reach that local server; BENCH_LOG_LEVEL sets the log level (default silent; `info` is the gateway's default: JSON lines on stderr).
 * BENCH_OPENAPI_SPEC (a file path) adds that OpenAPI document as source `target` (its GET operations; tools.http's address rules).
 * BENCH_APPROVALS=1 adds docs/approvals.md's approvals.require rules (none gates echo).
 * BENCH_OTLP_ENDPOINT turns tracing on (telemetry.otlp_endpoint), BENCH_SAMPLE_RATIO sets its sample_ratio.
 */
import { defineConfig } from '../../dist/index.js';
import { ECHO_TOOL, serveGateway } from './serve-gateway.mjs';

const benchPlugin = {
  name: 'bench',
  listTools: () => [
    ECHO_TOOL,
    {
      name: 'hold',
      description: 'Emit one status event, then wait `ms` milliseconds',
      input_parameters: [{ name: 'ms', type: 'integer', description: 'How long to wait', required: true }],
      tags: ['bench'],
    },
    {
      name: 'stream',
      description: 'Emit `count` small progress events as fast as possible',
      input_parameters: [{ name: 'count', type: 'integer', description: 'Number of events', required: true }],
      tags: ['bench'],
    },
  ],
  async executeTool(name, args, ctx) {
    if (name === 'echo') return { text: args.text };
    if (name === 'hold') {
      ctx.emit('status', { message: 'holding' });
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, args.ms);
        ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      return { held_ms: args.ms };
    }
    const count = args.count;
    // Emit in slices so the event loop can write to the socket while the tool runs, and wait for the reader
    // when it is behind (back-pressure, as any tool that emits a lot should).
    for (let seq = 0; seq < count; ) {
      const end = Math.min(count, seq + 1000);
      for (; seq < end; seq++) ctx.emit('progress', { pct: seq % 100, message: 'tick' });
      if (ctx.signal.aborted) break;
      await new Promise((r) => setImmediate(r));
      await ctx.eventsTaken();
    }
    return { count };
  },
};

const heartbeat_s = Number(process.env.BENCH_HEARTBEAT_S ?? 15);
const config = defineConfig({
  server: { host: '127.0.0.1', port: 0, max_timeout_s: 600, heartbeat_s },
  tools: {
    ...(process.env.BENCH_WORKSPACE && { fs: { root: process.env.BENCH_WORKSPACE } }),
    // A scoped exception to the SSRF rule (checked at connect time like any other): the local server scenario 9 fetches.
    ...(process.env.BENCH_HTTP_ALLOW && { http: { allow_hosts: [process.env.BENCH_HTTP_ALLOW] } }),
  },
  ...(process.env.BENCH_AGENT_CARD && { agents: { peer: { card: process.env.BENCH_AGENT_CARD } } }),
  ...(process.env.BENCH_MCP_URL && { mcp: { servers: { peer: { url: process.env.BENCH_MCP_URL } } } }),
  ...(process.env.BENCH_OPENAPI_SPEC && {
    openapi: { sources: { target: { spec: process.env.BENCH_OPENAPI_SPEC } } },
  }),
  // docs/approvals.md's rules: calls to other tools (the echo the bench loads) must pay nothing for them.
  ...(process.env.BENCH_APPROVALS && {
    approvals: { require: ['kind:shell', { tool: 'write_file', when: { path: { not_glob: 'scratch/**' } } }] },
  }),
  ...(process.env.BENCH_OTLP_ENDPOINT && {
    telemetry: {
      otlp_endpoint: process.env.BENCH_OTLP_ENDPOINT,
      sample_ratio: Number(process.env.BENCH_SAMPLE_RATIO ?? 1),
    },
  }),
});
await serveGateway(config, [benchPlugin], process.env.BENCH_LOG_LEVEL ?? 'silent');
