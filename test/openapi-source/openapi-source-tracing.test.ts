/**
 * Tracing of OpenAPI calls (issue 56), received by a real OTLP/HTTP receiver: each upstream request is a
 * client span under the call's span, named after the method and the operation's route template (never the
 * path filled with the caller's values), with the status; the API gets that span's traceparent; neither
 * the arguments nor the brokered credential is exported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { startTestApi, type TestApi } from '../helpers/openapi-api.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

// Export within 50 ms of a span's end instead of the SDK's 5 s (read when the span processor is made).
process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

const TOKEN = 'otel-bearer-5d4c3b2a1908';
/** An argument value that must never appear in what is exported. */
const VALUE = 'item-id-value-8e7f6a';
const hex = (bytes: number) =>
  [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');

describe('OpenAPI calls in traces', { timeout: 60_000 }, () => {
  let receiver: OtlpReceiver;
  let api: TestApi;
  let gw: TestGateway;
  const trace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  const span = (traceId: string, what: string, match: (s: ReceivedSpan) => boolean) =>
    waitFor(`the ${what} span of trace ${traceId}`, () => trace(traceId).find(match), 15_000);

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    api = await startTestApi({ auth: { type: 'bearer', token: TOKEN } });
    gw = await startGateway({
      config: {
        telemetry: { otlp_endpoint: receiver.url, service_name: 'a2e-openapi-trace-test' },
        openapi: {
          sources: {
            shop: {
              spec: `${api.url}/openapi.json`,
              allow_private: true,
              auth: { type: 'bearer', token_env: 'SHOP_TOKEN' },
              operations: { include: ['getItem', 'missing'] },
            },
          },
        },
      },
      env: { SHOP_TOKEN: TOKEN },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await api?.close();
    await receiver?.close();
  });

  it('one client span per request: method, route template, server and status; the API gets its traceparent', async () => {
    const traceId = hex(16);
    const before = api.requests.length;
    const res = await postJson(`${gw.url}/tool/call`, callBody('shop_getItem', { id: VALUE, 'x-tenant': VALUE }), {
      traceparent: `00-${traceId}-${hex(8)}-01`,
    });
    expect(res.json.data).toMatchObject({ success: true, data: { status: 200 } });
    const call = await span(traceId, 'call', (s) => s.name === 'call shop_getItem');
    const hop = await span(traceId, 'openapi hop', (s) => s.kind === SPAN_KIND.client);
    expect(hop.parentSpanId).toBe(call.spanId);
    expect(hop.name).toBe('GET /api/items/{id}');
    const port = Number(new URL(api.url).port);
    expect(hop.attributes).toEqual({
      'http.request.method': 'GET',
      'http.route': '/api/items/{id}',
      'a2e.hop': 'openapi',
      'server.address': '127.0.0.1',
      'server.port': port,
      'url.scheme': 'http',
      'http.response.status_code': 200,
    });
    const sent = api.requests.slice(before);
    expect(sent.map((r) => r.headers.traceparent)).toEqual([`00-${traceId}-${hop.spanId}-01`]);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('a 4xx answer marks its span failed; nothing exported holds an argument or the credential', async () => {
    const traceId = hex(16);
    const res = await postJson(`${gw.url}/tool/call`, callBody('shop_missing', {}), {
      traceparent: `00-${traceId}-${hex(8)}-01`,
    });
    expect(res.json.data).toMatchObject({ success: false });
    const hop = await span(traceId, 'openapi hop', (s) => s.kind === SPAN_KIND.client);
    expect(hop).toMatchObject({ name: 'GET /api/missing', attributes: { 'http.response.status_code': 404 } });
    expect(hop.status).toBe(2);
    const exported = receiver.bodies.join('\n');
    expect(exported).toContain('/api/items/{id}');
    expect(exported).not.toContain(VALUE);
    expect(exported).not.toContain(TOKEN);
  });
});
