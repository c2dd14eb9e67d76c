/**
 * telemetry.sample_ratio: a request that starts a trace is recorded with that probability, decided once
 * before any span (tracing.ts asks the sampler first; the SDK then takes that answer rather than drawing
 * again on the trace id it makes, which would record ratio² of them). A file of its own: the SDK is one
 * per process, and the other tracing tests' gateways set other ratios.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, postJson, startGateway } from '../helpers/server.js';

process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

describe('tracing with sample_ratio 0.5', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('records a new trace with the configured ratio, deciding once: its request and call spans, or none', async () => {
    const half = await startGateway({
      plugins: [definePlugin('own', [echoTool])],
      config: { telemetry: { otlp_endpoint: receiver.url, service_name: 'a2e-ratio-test', sample_ratio: 0.5 } },
    });
    try {
      const calls = 300;
      for (let i = 0; i < calls; i++) await postJson(`${half.url}/tool/call`, callBody('echo', { text: 'x' }));
      const ours = () => receiver.spans.filter((s) => s.name === 'call echo');
      // Wait for the exports to settle: the count stops changing.
      let last = -1;
      await waitFor(
        'the exports to settle',
        async () => {
          const now = ours().length;
          const settled = now === last && now > 0;
          last = now;
          if (!settled) await new Promise((r) => setTimeout(r, 300));
          return settled || undefined;
        },
        20_000,
      );
      const callSpans = ours();
      // Half of 300, give or take ~4 standard deviations; drawing twice (once before the span, once by the SDK) gives a quarter.
      expect(callSpans.length).toBeGreaterThan(115);
      expect(callSpans.length).toBeLessThan(185);
      // Every recorded call's request was recorded too (same trace, the call's parent).
      for (const call of callSpans) {
        expect(receiver.spans.some((s) => s.traceId === call.traceId && s.spanId === call.parentSpanId)).toBe(true);
      }
    } finally {
      await half.close();
    }
  });
});
