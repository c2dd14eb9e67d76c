/**
 * What every bench process running the real gateway (dist/, `npm run build`)
 * shares: the echo tool, the store chosen by env, and the start-up (listen,
 * then announce readiness to the harness).
 */
import { createGateway, createLogger } from '../../dist/index.js';
import { ready } from './common.mjs';

/** echo {text} → {text}: the tool the request-rate scenarios call. */
export const ECHO_TOOL = {
  name: 'echo',
  description: 'Echo the given text back',
  input_parameters: [{ name: 'text', type: 'string', description: 'Text to echo', required: true }],
  output_parameters: [{ name: 'text', type: 'string', description: 'The same text' }],
  idempotent: true,
  tags: ['bench'],
};

/** `{store}` config: BENCH_STORE_URL set = store.kind redis on that Redis (keys prefixed BENCH_STORE_PREFIX, default `bench:`); unset = none (memory). */
export function storeFromEnv() {
  const url = process.env.BENCH_STORE_URL;
  return url ? { store: { kind: 'redis', url, prefix: process.env.BENCH_STORE_PREFIX ?? 'bench:' } } : {};
}

/** Start the gateway with `config` and `plugins` on an ephemeral port and tell the harness its URL. */
export async function serveGateway(config, plugins, logLevel = 'silent') {
  const gateway = await createGateway({ config, plugins, logger: createLogger(logLevel) });
  const { url } = await gateway.listen();
  ready(url);
  return gateway;
}
