/**
 * The real gateway (dist/) with an `echo` tool, its store chosen by env, for
 * the store scenario: BENCH_STORE_URL set = store.kind redis on that Redis
 * (BENCH_STORE_PREFIX keys), else memory. BENCH_SESSIONS=1 turns on what makes
 * every call use the store: a token (BENCH_TOKEN_SHA256) with a rate limit
 * high enough never to refuse, and sessions (one per connection, made by the
 * harness with POST /handshake).
 */
import { createGateway, createLogger, defineConfig } from '../../dist/index.js';
import { ready } from './common.mjs';

const echo = {
  name: 'bench',
  listTools: () => [
    {
      name: 'echo',
      description: 'Echo the given text back',
      input_parameters: [{ name: 'text', type: 'string', description: 'Text to echo', required: true }],
      output_parameters: [{ name: 'text', type: 'string', description: 'The same text' }],
    },
  ],
  executeTool: async (_name, args) => ({ text: args.text }),
};

const redisUrl = process.env.BENCH_STORE_URL;
const sessions = process.env.BENCH_SESSIONS === '1';
const config = defineConfig({
  server: { host: '127.0.0.1', port: 0 },
  ...(redisUrl && { store: { kind: 'redis', url: redisUrl, prefix: process.env.BENCH_STORE_PREFIX ?? 'bench:' } }),
  ...(sessions && {
    auth: { tokens: [{ name: 'bench', token_sha256: process.env.BENCH_TOKEN_SHA256 }] },
    sessions: { required: true, max_parallel: 64 },
    limits: { rate_per_s: 1_000_000, rate_burst: 1_000_000 },
  }),
});
const gateway = await createGateway({ config, plugins: [echo], logger: createLogger('silent') });
const { url } = await gateway.listen();
ready(url);
