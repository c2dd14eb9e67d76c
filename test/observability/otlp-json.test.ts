/**
 * The gateway's OTLP JSON (src/observability/otlp-json.ts) against the SDK's own serializer: for real spans
 * made by the SDK — remote and local parents, a tracestate, events, links, every attribute type, a status message,
 * two resources and two scopes in one batch — the same bytes. That the collector takes them is proved by the
 * tracing tests, which export through it to test/helpers/otlp-receiver.ts.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { exportRequestJson, otlpJsonTraceSerializer } from '../../src/observability/otlp-json.js';

function spansOf(resourceName: string, make: (provider: BasicTracerProvider) => void): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': resourceName, 'service.version': '1.2.3', 'host.cores': 2 }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  make(provider);
  return exporter.getFinishedSpans();
}

const sdkJson = (spans: ReadableSpan[]) => new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans));

describe('OTLP JSON written from the spans', () => {
  it('is byte for byte what the SDK serializer writes, for every field a span can carry', () => {
    const remote = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: new TraceState('vendor=value,other=x'),
    });
    const a = spansOf('gateway', (provider) => {
      const tracer = provider.getTracer('a2e-gateway', '0.1.0');
      const server = tracer.startSpan(
        'POST /tool/call',
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': 'POST',
            'server.port': 8080,
            ratio: 0.25,
            ok: true,
            tags: ['a', 'b'],
            counts: [1, 2.5],
            'quote"and\\slash\n': 'ünïcødé ✓ "quoted"',
          },
          links: [
            { context: { traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), traceFlags: 0 }, attributes: { why: 'x' } },
          ],
        },
        remote,
      );
      server.addEvent('retry', { attempt: 2 });
      server.addEvent('plain');
      const call = tracer.startSpan('call echo', { kind: SpanKind.INTERNAL }, trace.setSpan(ROOT_CONTEXT, server));
      call.setAttribute('a2e.call.duration_ms', 0);
      call.setAttribute('nan', Number.NaN);
      call.setStatus({ code: SpanStatusCode.ERROR, message: 'tool failed' });
      call.end();
      server.setStatus({ code: SpanStatusCode.OK });
      server.end();
      provider.getTracer('other-scope').startSpan('root of its own', { kind: SpanKind.CLIENT }).end();
    });
    const b = spansOf('second-resource', (provider) => provider.getTracer('a2e-gateway', '0.1.0').startSpan('x').end());
    const batch = [...a, b[0]!, a[0]!];
    expect(batch.length).toBe(5);
    expect(exportRequestJson(batch)).toBe(sdkJson(batch));
    expect(Buffer.from(otlpJsonTraceSerializer.serializeRequest(batch)!).toString('utf8')).toBe(sdkJson(batch));
    // Timestamps are nanoseconds since the epoch, exact (more digits than a double holds).
    const parsed = JSON.parse(exportRequestJson(a)) as {
      resourceSpans: { scopeSpans: { spans: { startTimeUnixNano: string }[] }[] }[];
    };
    const ns = BigInt(parsed.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.startTimeUnixNano);
    expect(ns).toBe(BigInt(a[0]!.startTime[0]) * 1_000_000_000n + BigInt(a[0]!.startTime[1]));
  });

  it('an empty batch and a collector answer: as the SDK reads them', () => {
    expect(exportRequestJson([])).toBe(sdkJson([]));
    const answer = new TextEncoder().encode('{"partialSuccess":{"rejectedSpans":"2"}}');
    expect(otlpJsonTraceSerializer.deserializeResponse(answer)).toEqual(
      JsonTraceSerializer.deserializeResponse(answer),
    );
    expect(otlpJsonTraceSerializer.deserializeResponse(new Uint8Array())).toEqual({});
    expect(otlpJsonTraceSerializer.deserializeResponse(new TextEncoder().encode('not json'))).toEqual({});
  });
});
