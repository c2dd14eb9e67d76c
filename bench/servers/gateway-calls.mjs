/**
 * The real gateway (dist/) for the call-resource streaming scenario, with one
 * tool whose events carry the time they were emitted (epoch ms, sub-ms), so a
 * watcher in another process measures emit-to-arrival latency:
 *   ticks {count, every_ms} → `count` progress events (message = emit time), as fast as it can when every_ms is 0
 * BENCH_STORE_URL set: store.kind redis at that URL (prefix BENCH_STORE_PREFIX); unset: memory.
 */
import { defineConfig } from '../../dist/index.js';
import { serveGateway, storeFromEnv } from './serve-gateway.mjs';

const now = () => (performance.timeOrigin + performance.now()).toFixed(3);

const ticksPlugin = {
  name: 'bench-calls',
  listTools: () => [
    {
      name: 'ticks',
      description:
        'Emit `count` progress events carrying their emit time, one every `every_ms` (0: as fast as possible)',
      input_parameters: [
        { name: 'count', type: 'integer', description: 'Number of events', required: true },
        { name: 'every_ms', type: 'integer', description: 'Pause between events, ms', required: false },
      ],
      tags: ['bench'],
    },
  ],
  async executeTool(_name, args, ctx) {
    const count = args.count;
    const every = args.every_ms ?? 0;
    for (let seq = 0; seq < count && !ctx.signal.aborted; ) {
      if (every > 0) {
        ctx.emit('progress', { pct: seq % 100, message: now() });
        seq++;
        await new Promise((r) => setTimeout(r, every));
        continue;
      }
      // As fast as it can, in slices so the event loop writes meanwhile.
      const end = Math.min(count, seq + 1000);
      for (; seq < end; seq++) ctx.emit('progress', { pct: seq % 100, message: now() });
      await new Promise((r) => setImmediate(r));
    }
    return { count };
  },
};

const config = defineConfig({
  server: { host: '127.0.0.1', port: 0, max_timeout_s: 600, heartbeat_s: 15 },
  calls: { max_events: 200_000 },
  limits: {
    call_events_bytes: 1024 * 1024 * 1024,
    events_total_bytes: 1024 * 1024 * 1024,
    call_retained_events_bytes: 1024 * 1024 * 1024,
  },
  tools: { fs: { enabled: false }, shell: { enabled: false }, http: { enabled: false }, eval: { enabled: false } },
  ...storeFromEnv(),
});
const gateway = await serveGateway(config, [ticksPlugin]);
process.on('SIGTERM', () => void gateway.close().then(() => process.exit(0)));
