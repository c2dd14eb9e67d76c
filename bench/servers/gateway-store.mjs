/**
 * The real gateway (dist/) with an `echo` tool, its store chosen by env, for
 * the store scenario: BENCH_STORE_URL set = store.kind redis on that Redis
 * (BENCH_STORE_PREFIX keys), else memory. BENCH_SESSIONS=1 turns on what makes
 * every call use the store: a token (BENCH_TOKEN_SHA256) with a rate limit
 * high enough never to refuse, and sessions (one per connection, made by the
 * harness with POST /handshake).
 */
import { defineConfig } from '../../dist/index.js';
import { ECHO_TOOL, serveGateway, storeFromEnv } from './serve-gateway.mjs';

const echo = { name: 'bench', listTools: () => [ECHO_TOOL], executeTool: async (_name, args) => ({ text: args.text }) };

const sessions = process.env.BENCH_SESSIONS === '1';
const config = defineConfig({
  server: { host: '127.0.0.1', port: 0 },
  ...storeFromEnv(),
  ...(sessions && {
    auth: { tokens: [{ name: 'bench', token_sha256: process.env.BENCH_TOKEN_SHA256 }] },
    sessions: { required: true, max_parallel: 64 },
    limits: { rate_per_s: 1_000_000, rate_burst: 1_000_000 },
  }),
});
await serveGateway(config, [echo]);
