/**
 * Tracing on, a call not sampled: no span is made or exported, yet the caller's traceparent reaches every
 * peer the call talks to, as it came (docs/tracing.md, "Unsampled calls"): a real @a2a-js/sdk A2A peer, a
 * plain HTTP server (http_request) and another gateway over MCP (Streamable HTTP, behind a proxy that
 * records the headers it forwards). A request without traceparent that the sampler leaves out sends none.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AsyncLocalStorage } from 'node:async_hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSdkPeer, type SdkPeer } from '../helpers/a2a-sdk-peer.js';
import { waitFor } from '../helpers/a2a-stub.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

const hex = (bytes: number) =>
  [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

describe('tracing on, a call not sampled', () => {
  let receiver: OtlpReceiver;
  let peer: SdkPeer;
  let upstream: TestGateway;
  let gw: TestGateway;
  let target: Server;
  let proxy: Server;
  const targetHeaders: IncomingHttpHeaders[] = [];
  const mcpHeaders: IncomingHttpHeaders[] = [];
  let targetPort = 0;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    peer = await startSdkPeer('strict');
    target = createServer((req, res) => {
      targetHeaders.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    });
    targetPort = await listen(target);
    upstream = await startGateway({ plugins: [definePlugin('more', [echoTool])] });
    const up = new URL(upstream.url);
    // The MCP peer is another gateway; this proxy in front of it records what the hop sent.
    proxy = createServer((req, res) => {
      mcpHeaders.push(req.headers);
      const forward = request(
        { host: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    const proxyPort = await listen(proxy);
    gw = await startGateway({
      config: {
        // Parent-based with a ratio of 0: a request is recorded only when its caller sampled its trace.
        telemetry: { otlp_endpoint: receiver.url, sample_ratio: 0 },
        agents: { sdk: { card: peer.url, poll_ms: 50, timeout_ms: 20_000 } },
        tools: { http: { enabled: true, allow_hosts: ['127.0.0.1'] } },
        mcp: { servers: { up: { url: `http://127.0.0.1:${proxyPort}/mcp` } }, start_wait_ms: 30_000 },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
    await peer?.close();
    await new Promise((resolve) => proxy?.close(resolve));
    await new Promise((resolve) => target?.close(resolve));
    await receiver?.close();
  });

  /** Call `tool` with `headers`; what each peer received while it ran. */
  async function callThrough(tool: string, args: Record<string, unknown>, headers: Record<string, string>) {
    const seen = { a2a: peer.traceparents.length, http: targetHeaders.length, mcp: mcpHeaders.length };
    const res = await postJson(`${gw.url}/tool/call`, callBody(tool, args), headers);
    expect(res.json.data, tool).toMatchObject({ success: true });
    return {
      a2a: peer.traceparents.slice(seen.a2a),
      http: targetHeaders.slice(seen.http).map((h) => h.traceparent),
      mcp: mcpHeaders.slice(seen.mcp).map((h) => h.traceparent),
    };
  }

  it("passes an unsampled caller's traceparent on to A2A, http_request and MCP peers as it came, and exports no span", async () => {
    const traceId = hex(16);
    const traceparent = `00-${traceId}-${hex(8)}-00`;
    const a2a = await callThrough('SDK_Agent_complete', { task: 'ship it' }, { traceparent });
    expect(a2a.a2a.length).toBeGreaterThan(0);
    expect(a2a.a2a.every((t) => t === traceparent)).toBe(true);
    expect(
      (await callThrough('http_request', { url: `http://127.0.0.1:${targetPort}/` }, { traceparent })).http,
    ).toEqual([traceparent]);
    const mcp = await callThrough('up_echo', { text: 'hi' }, { traceparent });
    expect(mcp.mcp.length).toBeGreaterThan(0);
    expect(mcp.mcp.every((t) => t === traceparent)).toBe(true);

    // A sampled caller's request afterwards is exported; by then the unsampled ones' spans would have been too.
    const sampled = hex(16);
    await postJson(`${gw.url}/tool/call`, callBody('http_request', { url: `http://127.0.0.1:${targetPort}/` }), {
      traceparent: `00-${sampled}-${hex(8)}-01`,
    });
    await waitFor(
      'the sampled call span',
      () => receiver.spans.find((s) => s.traceId === sampled && s.name === 'call http_request'),
      15_000,
    );
    expect(receiver.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('does no tracing work for a request without traceparent that the sampler leaves out: no extraction, no sampler call, no context entered', async () => {
    const work = [
      vi.spyOn(W3CTraceContextPropagator.prototype, 'extract'),
      vi.spyOn(ParentBasedSampler.prototype, 'shouldSample'),
      vi.spyOn(TraceIdRatioBasedSampler.prototype, 'shouldSample'),
      vi.spyOn(AsyncLocalStorage.prototype, 'run'),
      vi.spyOn(AsyncLocalStorage.prototype, 'enterWith'),
    ];
    for (let i = 0; i < 20; i++) {
      const res = await postJson(`${gw.url}/tool/call`, callBody('up_echo', { text: `hi ${i}` }));
      expect(res.json.data).toMatchObject({ success: true });
      expect(JSON.stringify(res.json.data.data)).toContain(`hi ${i}`);
    }
    for (const spy of work) expect(spy, spy.getMockName()).not.toHaveBeenCalled();
    // The same path as with tracing off (routes/http/around-routes.ts): the route is one handler to Hono, with the
    // span made around it once per route, and no '*' middleware in front of every route.
    const { app } = gw.gateway;
    expect(app.router.match('POST', '/tool/call')[0]).toHaveLength(1);
    expect(app.routes.some((r) => r.method === 'ALL' && r.path === '/*')).toBe(false);
    // The spies see real calls: a request with a sampled traceparent goes through all of it.
    const sampled = hex(16);
    await postJson(`${gw.url}/tool/call`, callBody('up_echo', { text: 'hi' }), {
      traceparent: `00-${sampled}-${hex(8)}-01`,
    });
    expect(work[0]).toHaveBeenCalled();
    expect(work[1]).toHaveBeenCalled();
    expect(work[3]).toHaveBeenCalled();
    // Its spans are exported before the next test counts what arrives.
    await waitFor(
      'the sampled call span',
      () => receiver.spans.find((s) => s.traceId === sampled && s.name === 'call up_echo'),
      15_000,
    );
  });

  it('sends no traceparent for a request without one that the sampler leaves out', async () => {
    const before = receiver.spans.length;
    const seen = await callThrough('http_request', { url: `http://127.0.0.1:${targetPort}/` }, {});
    expect(seen.http).toEqual([undefined]);
    const sampled = hex(16);
    await postJson(`${gw.url}/tool/call`, callBody('http_request', { url: `http://127.0.0.1:${targetPort}/` }), {
      traceparent: `00-${sampled}-${hex(8)}-01`,
    });
    await waitFor(
      'the sampled call span',
      () => receiver.spans.find((s) => s.traceId === sampled && s.name === 'call http_request'),
      15_000,
    );
    // Only the sampled request's spans arrived: its request, call and hop.
    expect(receiver.spans.slice(before).every((s) => s.traceId === sampled)).toBe(true);
  });
});
