/**
 * OpenTelemetry traces (docs/tracing.md), received by a real OTLP/HTTP receiver on 127.0.0.1:
 * request (server) → call (internal) → each outgoing hop (client), with W3C traceparent carried to
 * a real @a2a-js/sdk peer, to a plain HTTP server (http_request) and to another gateway over MCP;
 * an incoming traceparent continues the caller's trace. With telemetry off, the CLI loads neither
 * the SDK nor the exporter (a recorder sees every ES module resolved and CommonJS module required);
 * with OTEL_* variables it does.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkPeer, type SdkPeer } from '../helpers/a2a-sdk-peer.js';
import { waitFor } from '../helpers/a2a-stub.js';
import { startCli } from '../helpers/cli.js';
import { loadedModulesIn } from '../helpers/loaded-modules.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { definePlugin, echoTool, failTool } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { ConfigError, defineConfig } from '../../src/config/index.js';
import { telemetrySettings } from '../../src/observability/telemetry.js';

// Export within 50 ms of a span's end instead of the SDK's 5 s (read when the span processor is made).
process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

const RECORD_IMPORTS = fileURLToPath(new URL('../fixtures/record-imports.mjs', import.meta.url));
/** Argument values that must never appear in what is exported. */
const SECRET = 'argument-value-7f3c91';

const hex = (bytes: number) =>
  [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');

describe('OpenTelemetry traces', () => {
  let receiver: OtlpReceiver;
  let peer: SdkPeer;
  let gw: TestGateway;
  let target: Server;
  const targetHeaders: Record<string, string | string[] | undefined>[] = [];

  const trace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  /** Wait until the trace has a span matching `match`, then return it. */
  const span = (traceId: string, what: string, match: (s: ReceivedSpan) => boolean) =>
    waitFor(`the ${what} span of trace ${traceId}`, () => trace(traceId).find(match), 15_000);

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    peer = await startSdkPeer('strict');
    target = createServer((req, res) => {
      targetHeaders.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello from the target');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    gw = await startGateway({
      plugins: [definePlugin('own', [echoTool, failTool])],
      config: {
        telemetry: { otlp_endpoint: receiver.url, service_name: 'a2e-trace-test' },
        agents: { sdk: { card: peer.url, poll_ms: 50, timeout_ms: 20_000 } },
        tools: { http: { enabled: true, allow_hosts: ['127.0.0.1'] } },
      },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await peer?.close();
    await new Promise((resolve) => target?.close(resolve));
    await receiver?.close();
  });

  it('a call through an A2A peer: request → call → JSON-RPC hop in the caller’s trace; the peer gets the hop’s traceparent', async () => {
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const before = peer.calls.length;
    const res = await postJson(`${gw.url}/tool/call`, callBody('SDK_Agent_complete', { task: `ship ${SECRET}` }), {
      traceparent: `00-${traceId}-${callerSpanId}-01`,
    });
    expect(res.json.data).toMatchObject({ success: true, data: { output: `done: ship ${SECRET}` } });

    const request = await span(traceId, 'request', (s) => s.kind === SPAN_KIND.server);
    const call = await span(traceId, 'call', (s) => s.name === 'call SDK_Agent_complete');
    const hop = await span(traceId, 'A2A hop', (s) => s.kind === SPAN_KIND.client);

    // The request continues the caller's trace; the call is its child; the hop is the call's.
    expect(request.parentSpanId).toBe(callerSpanId);
    expect(call.parentSpanId).toBe(request.spanId);
    expect(hop.parentSpanId).toBe(call.spanId);
    expect(request.name).toBe('POST /tool/call');
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.path': '/tool/call',
      'http.route': '/tool/call',
      'http.response.status_code': 200,
    });
    expect(call.kind).toBe(SPAN_KIND.internal);
    expect(call.attributes).toMatchObject({
      'a2e.tool.name': 'SDK_Agent_complete',
      'a2e.tool.kind': 'a2a',
      'a2e.call.door': 'rest',
      'a2e.call.outcome': 'success',
    });
    expect(call.attributes['a2e.call.duration_ms']).toBeGreaterThanOrEqual(0);
    expect(hop).toMatchObject({ name: 'SendStreamingMessage', status: 0 });
    expect(hop.attributes).toMatchObject({
      'rpc.system': 'jsonrpc',
      'rpc.method': 'SendStreamingMessage',
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(peer.url).port),
      'http.response.status_code': 200,
    });
    // Nesting in time too: the hop within the call, the call within the request.
    expect(call.startNs >= request.startNs && call.endNs <= request.endNs).toBe(true);
    expect(hop.startNs >= call.startNs && hop.endNs <= call.endNs).toBe(true);
    expect(request.resource).toMatchObject({ 'service.name': 'a2e-trace-test', 'service.version': expect.any(String) });

    // The peer was sent the gateway's hop span as the parent of whatever it does next.
    expect(peer.calls.slice(before)).toEqual([{ method: 'SendStreamingMessage', version: '1.0' }]);
    expect(peer.traceparents.slice(before)).toEqual([`00-${traceId}-${hop.spanId}-01`]);
  });

  it('a request without traceparent starts a trace of its own; failed and refused calls have failed call spans', async () => {
    const res = await postJson(`${gw.url}/tool/call`, callBody('fail', { message: `broke ${SECRET}` }));
    expect(res.json.data).toMatchObject({ success: false, error_code: 'tool_error' });
    const failed = await waitFor('the span of the failed call', () =>
      receiver.spans.find((s) => s.name === 'call fail' && s.attributes['a2e.call.outcome'] === 'tool_error'),
    );
    expect(failed.status).toBe(2);
    const request = await span(failed.traceId, 'request', (s) => s.spanId === failed.parentSpanId);
    expect(request).toMatchObject({ kind: SPAN_KIND.server, parentSpanId: '' });
    expect(request.traceId).not.toBe('0'.repeat(32));

    const traceId = hex(16);
    const unknown = await postJson(`${gw.url}/tool/call`, callBody('no_such_tool', {}), {
      traceparent: `00-${traceId}-${hex(8)}-01`,
    });
    expect(unknown.status).toBe(404);
    const refused = await span(traceId, 'refused call', (s) => s.kind === SPAN_KIND.internal);
    // A made-up name is an attribute, not the span's name (span names stay a small set).
    expect(refused.name).toBe('call (unknown tool)');
    expect(refused.attributes).toMatchObject({
      'a2e.tool.name': 'no_such_tool',
      'a2e.call.outcome': 'unknown_tool',
      'a2e.call.door': 'rest',
    });
    expect(refused.status).toBe(2);
    const refusedRequest = await span(traceId, 'request', (s) => s.kind === SPAN_KIND.server);
    expect(refusedRequest.attributes).toMatchObject({ 'http.response.status_code': 404 });
    expect(refused.parentSpanId).toBe(refusedRequest.spanId);
  });

  it('a caller that asks not to sample (flags 00) gets no spans recorded for its trace', async () => {
    const unsampled = hex(16);
    const sampled = hex(16);
    await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'quiet' }), {
      traceparent: `00-${unsampled}-${hex(8)}-00`,
    });
    await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'loud' }), {
      traceparent: `00-${sampled}-${hex(8)}-01`,
    });
    // The sampled request's spans came after the unsampled one's would have.
    await span(sampled, 'call', (s) => s.name === 'call echo');
    await span(sampled, 'request', (s) => s.kind === SPAN_KIND.server);
    expect(trace(unsampled)).toEqual([]);
  });

  it('http_request: one client span per exchange, its traceparent sent to the server; no path, query or headers in it', async () => {
    const traceId = hex(16);
    const port = (target.address() as AddressInfo).port;
    const before = targetHeaders.length;
    const res = await postJson(
      `${gw.url}/tool/call`,
      callBody('http_request', {
        url: `http://127.0.0.1:${port}/private/${SECRET}?key=${SECRET}`,
        headers: { 'x-api-key': SECRET },
      }),
      { traceparent: `00-${traceId}-${hex(8)}-01` },
    );
    expect(res.json.data).toMatchObject({ success: true, data: { status: 200, body: 'hello from the target' } });
    const call = await span(traceId, 'call', (s) => s.name === 'call http_request');
    const hop = await span(traceId, 'http hop', (s) => s.kind === SPAN_KIND.client);
    expect(hop.parentSpanId).toBe(call.spanId);
    expect(hop.name).toBe('GET');
    expect(hop.attributes).toEqual({
      'http.request.method': 'GET',
      'a2e.hop': 'http_request',
      'server.address': '127.0.0.1',
      'server.port': port,
      'url.scheme': 'http',
      'http.response.status_code': 200,
    });
    expect(targetHeaders.slice(before).map((h) => h.traceparent)).toEqual([`00-${traceId}-${hop.spanId}-01`]);

    // A caller that sends its own traceparent keeps it.
    const own = `00-${hex(16)}-${hex(8)}-01`;
    await postJson(
      `${gw.url}/tool/call`,
      callBody('http_request', { url: `http://127.0.0.1:${port}/`, headers: { traceparent: own } }),
    );
    expect(targetHeaders.at(-1)!.traceparent).toBe(own);
  });

  it('gateway → gateway over MCP (Streamable HTTP): the upstream continues the downstream’s trace; its call comes through door "mcp"', async () => {
    const upstream = await startGateway({
      plugins: [definePlugin('more', [echoTool])],
      config: { telemetry: { otlp_endpoint: receiver.url } },
    });
    const downstream = await startGateway({
      config: {
        telemetry: { otlp_endpoint: receiver.url },
        mcp: { servers: { up: { url: `${upstream.url}/mcp` } }, start_wait_ms: 30_000 },
      },
    });
    try {
      const traceId = hex(16);
      const res = await postJson(`${downstream.url}/tool/call`, callBody('up_echo', { text: SECRET }), {
        traceparent: `00-${traceId}-${hex(8)}-01`,
      });
      expect(res.json.data).toMatchObject({ success: true, data: { structuredContent: { text: SECRET } } });

      const downCall = await span(traceId, 'downstream call', (s) => s.name === 'call up_echo');
      const hop = await span(traceId, 'MCP hop', (s) => s.kind === SPAN_KIND.client);
      expect(hop.parentSpanId).toBe(downCall.spanId);
      expect(hop).toMatchObject({ name: 'tools/call echo' });
      expect(hop.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'echo',
        'a2e.mcp.server': 'up',
        'network.transport': 'tcp',
      });
      // The upstream's request span is the child of the hop: the traceparent went over the wire.
      const upRequest = await span(
        traceId,
        'upstream request',
        (s) => s.kind === SPAN_KIND.server && s.parentSpanId === hop.spanId,
      );
      expect(upRequest.attributes).toMatchObject({ 'http.route': '/mcp', 'http.request.method': 'POST' });
      const upCall = await span(traceId, 'upstream call', (s) => s.name === 'call echo');
      expect(upCall.parentSpanId).toBe(upRequest.spanId);
      expect(upCall.attributes).toMatchObject({ 'a2e.call.door': 'mcp', 'a2e.call.outcome': 'success' });
    } finally {
      await downstream.close();
      await upstream.close();
    }
  });

  it('gateway → gateway over A2A: the upstream (an A2A agent) continues the trace; its call comes through door "a2a"', async () => {
    const upstream = await startGateway({
      plugins: [definePlugin('more', [echoTool])],
      config: { telemetry: { otlp_endpoint: receiver.url }, a2a_server: { name: 'Upstream' } },
    });
    const downstream = await startGateway({
      config: { telemetry: { otlp_endpoint: receiver.url }, agents: { up: { card: upstream.url, poll_ms: 50 } } },
    });
    try {
      const traceId = hex(16);
      const res = await postJson(`${downstream.url}/tool/call`, callBody('Upstream_echo', { task: SECRET }), {
        traceparent: `00-${traceId}-${hex(8)}-01`,
      });
      expect(res.json.data).toMatchObject({ success: true, data: { state: 'completed' } });
      const downCall = await span(traceId, 'downstream call', (s) => s.name === 'call Upstream_echo');
      const hop = await span(
        traceId,
        'A2A hop',
        (s) => s.kind === SPAN_KIND.client && s.parentSpanId === downCall.spanId,
      );
      const upRequest = await span(
        traceId,
        'upstream request',
        (s) => s.kind === SPAN_KIND.server && s.parentSpanId === hop.spanId,
      );
      expect(upRequest.attributes).toMatchObject({ 'http.route': '/a2a', 'http.request.method': 'POST' });
      const upCall = await span(traceId, 'upstream call', (s) => s.name === 'call echo');
      expect(upCall.parentSpanId).toBe(upRequest.spanId);
      expect(upCall.attributes).toMatchObject({
        'a2e.call.door': 'a2a',
        'a2e.tool.kind': 'native',
        'a2e.call.outcome': 'success',
      });
    } finally {
      await downstream.close();
      await upstream.close();
    }
  });

  it('exports no argument values, URL paths or queries, or headers the callers sent', () => {
    expect(receiver.bodies.length).toBeGreaterThan(0);
    for (const body of receiver.bodies) expect(body).not.toContain(SECRET);
    expect(receiver.refused).toEqual([]);
  });
});

describe('telemetry on and off in the CLI', () => {
  let dir: string;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'a2e-tracing-'));
    await writeFile(
      join(dir, 'gateway.yaml'),
      `server:\n  port: 0\ntools:\n  fs: { root: ${JSON.stringify(dir)} }\n  shell: { enabled: false }\n  http: { enabled: false }\n  eval: { enabled: false }\n`,
    );
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Run the CLI with the import recorder, make one call (and scrape /metrics if asked), stop it; the modules it imported. */
  const run = async (name: string, env: Record<string, string>, scrape = false) => {
    const log = join(dir, `${name}.imports`);
    await writeFile(log, '');
    const { url, proc } = await startCli(['--config', join(dir, 'gateway.yaml')], {
      NODE_OPTIONS: `--import=${RECORD_IMPORTS}`,
      A2E_IMPORTS_LOG: log,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...env,
    });
    try {
      const res = await postJson(`${url}/tool/call`, callBody('list_dir', { path: '.' }));
      expect(res.json.data).toMatchObject({ success: true });
      if (scrape) expect((await fetch(`${url}/metrics`)).status).toBe(200);
    } finally {
      proc.kill('SIGTERM');
      await proc;
    }
    return loadedModulesIn(log);
  };
  const otel = (imports: string[], pkg: string) =>
    imports.some((u) => u.includes(`/node_modules/@opentelemetry/${pkg}/`));

  it('off (no telemetry section, no OTEL_* endpoint): neither the SDK nor the exporter is loaded', async () => {
    const imports = await run('off', { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' }, true);
    // The recorder works: it saw the gateway's own modules, the tracing facade among them.
    expect(imports.some((u) => u.endsWith('/src/server.ts'))).toBe(true);
    expect(imports.some((u) => u.endsWith('/src/observability/tracing.ts'))).toBe(true);
    // Required (CommonJS) packages too: prom-client, loaded from node_modules by the /metrics scrape.
    expect(imports.some((u) => u.includes('/node_modules/prom-client/lib/'))).toBe(true);
    // (The API package may be loaded: prom-client, loaded by the first /metrics scrape, requires it for its own use.)
    for (const pkg of [
      'sdk-trace-base',
      'sdk-trace',
      'otlp-transformer',
      'otlp-exporter-base',
      'resources',
      'core',
      'context-async-hooks',
    ]) {
      expect(otel(imports, pkg), `@opentelemetry/${pkg} loaded with telemetry off`).toBe(false);
    }
    expect(imports.some((u) => u.endsWith('/src/observability/otel-sdk.ts'))).toBe(false);
  });

  it('on through OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME: the exporter is loaded and the spans arrive', async () => {
    const imports = await run('env', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'gateway-from-env',
    });
    expect(otel(imports, 'otlp-exporter-base')).toBe(true);
    expect(otel(imports, 'sdk-trace-base')).toBe(true);
    expect(otel(imports, 'api')).toBe(true);
    // Stopping the gateway exported what was buffered.
    const call = await waitFor('the call span', () => receiver.spans.find((s) => s.name === 'call list_dir'));
    expect(call.resource).toMatchObject({ 'service.name': 'gateway-from-env' });
    expect(call.attributes).toMatchObject({ 'a2e.tool.kind': 'native', 'a2e.call.outcome': 'success' });
  });

  it('a collector that refuses the spans: one warning line naming the failure, no stack; calls go on', async () => {
    const refusing = createServer((req, res) =>
      req.resume().on('end', () => res.writeHead(400, { 'content-type': 'text/plain' }).end('no')),
    );
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const { url, proc } = await startCli(['--config', join(dir, 'gateway.yaml')], {
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`,
    });
    let stderr = '';
    proc.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const res = await postJson(`${url}/tool/call`, callBody('list_dir', { path: '.' }));
      expect(res.json.data).toMatchObject({ success: true });
      const line = await waitFor(
        'the export warning',
        () => stderr.split('\n').find((l) => l.includes('telemetry:')),
        20_000,
      );
      const entry = JSON.parse(line);
      expect(entry).toMatchObject({ level: 40, endpoint: expect.stringMatching(/\/v1\/traces$/) });
      expect(entry.msg).toBe('telemetry: could not export spans: Bad Request');
      expect(line).not.toMatch(/\n\s+at |stack|node:internal/);
    } finally {
      proc.kill('SIGTERM');
      await proc;
      await new Promise((resolve) => refusing.close(resolve));
    }
  });
});

describe('telemetry settings: the config section, completed by OTEL_* variables', () => {
  const settings = (telemetry: Record<string, unknown>, env: Record<string, string> = {}) =>
    telemetrySettings(defineConfig({ telemetry }).telemetry, env, '9.9.9');

  it('off unless an endpoint is known or telemetry.enabled is true', () => {
    expect(settings({})).toBeUndefined();
    expect(settings({ service_name: 'x', sample_ratio: 0.5 })).toBeUndefined();
    expect(settings({ enabled: true })).toMatchObject({
      endpoint: 'http://localhost:4318/v1/traces',
      serviceName: 'a2e-gateway',
    });
  });

  it('the config endpoint: a bare origin gets /v1/traces, a path is kept; config wins over the environment', () => {
    expect(settings({ otlp_endpoint: 'http://collector:4318' })?.endpoint).toBe('http://collector:4318/v1/traces');
    expect(settings({ otlp_endpoint: 'https://otel.example.com/custom/traces' })?.endpoint).toBe(
      'https://otel.example.com/custom/traces',
    );
    const both = settings(
      { otlp_endpoint: 'http://a:4318', service_name: 'from-config', sample_ratio: 0.25 },
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:4318',
        OTEL_SERVICE_NAME: 'from-env',
        OTEL_TRACES_SAMPLER: 'always_off',
      },
    );
    expect(both).toEqual({
      endpoint: 'http://a:4318/v1/traces',
      serviceName: 'from-config',
      serviceVersion: '9.9.9',
      sampler: { kind: 'ratio', parentBased: true, ratio: 0.25 },
    });
  });

  it('the standard variables: endpoints, service name, sampler and its argument, the off switches', () => {
    expect(settings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toMatchObject({
      endpoint: 'http://c:4318/v1/traces',
      sampler: { kind: 'always_on', parentBased: true },
    });
    expect(
      settings(
        {},
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/base', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://d:9/exact' },
      )?.endpoint,
    ).toBe('http://d:9/exact');
    expect(settings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/base' })?.endpoint).toBe(
      'http://c:4318/base/v1/traces',
    );
    expect(
      settings(
        {},
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
          OTEL_SERVICE_NAME: 'svc',
          OTEL_TRACES_SAMPLER: 'traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '0.1',
        },
      ),
    ).toMatchObject({ serviceName: 'svc', sampler: { kind: 'ratio', parentBased: false, ratio: 0.1 } });
    expect(
      settings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'parentbased_always_off' })
        ?.sampler,
    ).toEqual({
      kind: 'always_off',
      parentBased: true,
    });
    // The kill switches: OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none, telemetry.enabled: false.
    expect(settings({ otlp_endpoint: 'http://a:4318' }, { OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(settings({ enabled: true, otlp_endpoint: 'http://a:4318' }, { OTEL_SDK_DISABLED: 'true' })).toBeDefined();
    expect(
      settings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
    ).toBeUndefined();
    expect(settings({ enabled: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined();
  });

  it('unusable values are refused with what to write instead', () => {
    const refusal = (telemetry: Record<string, unknown>, env: Record<string, string>) => {
      try {
        settings(telemetry, env);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(
      /only http:\/\/ and https:\/\/ collectors/,
    );
    expect(refusal({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toMatch(
      /OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" is not a URL; write .* e\.g\. http:\/\/127\.0\.0\.1:4318/,
    );
    expect(refusal({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toMatch(
      /OTEL_TRACES_SAMPLER: "jaeger_remote" is not supported; use one of always_on, .*parentbased_traceidratio/,
    );
    expect(
      refusal(
        {},
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
          OTEL_TRACES_SAMPLER: 'traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '5',
        },
      ),
    ).toMatch(/OTEL_TRACES_SAMPLER_ARG: "5" is not a ratio; write a number from 0 to 1/);
    expect(() => defineConfig({ telemetry: { otlp_endpoint: 'grpc://collector:4317' } })).toThrow(
      /telemetry\.otlp_endpoint.*http:\/\/ or https:\/\//,
    );
    expect(() => defineConfig({ telemetry: { sample_ratio: 2 } })).toThrow(/telemetry\.sample_ratio/);
    expect(() => defineConfig({ telemetry: { endpoint: 'http://x' } } as never)).toThrow(/endpoint/);
  });
});
