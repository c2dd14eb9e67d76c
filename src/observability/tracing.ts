/**
 * The gateway's spans, over @opentelemetry/api alone. Off by default: then nothing here is called beyond a
 * check of `tracingOn`, and nothing of OpenTelemetry is loaded — not even the API, which start-up would
 * otherwise pay for. `observability/otel-sdk.ts` (imported on demand) hands over the API and a tracer once
 * the SDK is registered. Attributes name tools, doors, methods, hosts and outcomes — never
 * argument values, paths and queries of requested URLs, headers or bodies.
 *
 *   request (SERVER, routes/http/trace.ts) → call (INTERNAL, engine via CallTracer) → hop (CLIENT: A2A, MCP, http_request)
 *
 * Each hop carries its span to the peer as W3C `traceparent`; an incoming `traceparent` continues the caller's trace.
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type { Call, CallTracer } from '../engine/index.js';

/** True while spans are recorded. Check it before building anything for a span: off, nothing else here runs. */
export let tracingOn = false;
let tracer: Tracer;
let otel: typeof OtelApi;
/** The configured sampler's answer for a span under `parent`: the context to start it under, or undefined (none). */
let sample: Sampling;
/** Its answer for a span that starts a trace (no parent), drawn without making a trace id for it. */
let sampleNew: () => Context | undefined;
/** Calls outside any request get spans of their own (mcp-stdio, which has no HTTP request to decide for them). */
let rootCalls = false;

type Sampling = (parent: Context, name: string, kind: OtelApi.SpanKind) => Context | undefined;

/** @internal Called by otel-sdk.ts once the SDK is registered, and with undefined when it stops. */
export function setTracer(
  next: { api: typeof OtelApi; tracer: Tracer; sample: Sampling; sampleNew: () => Context | undefined } | undefined,
): void {
  if (next) {
    ({ tracer, sample, sampleNew } = next);
    // Copied out of the module namespace once: the bundle reaches a CommonJS module's members through a getter each.
    otel = { ...next.api };
  }
  tracingOn = next !== undefined;
}

/** For a process whose calls come without HTTP requests (mcp-stdio): each call samples as a trace of its own. */
export function traceCallsAsRoots(): void {
  rootCalls = true;
}

/*
 * Unsampled costs nothing but the traceparent: a request the sampler does not record makes no span, builds no
 * attributes and enters no AsyncLocalStorage context, unless its caller sent a traceparent, which is then
 * carried as it came (a context with the caller's span, no span of ours) so that the hops pass it on. A call
 * or hop makes a span only under a recorded one.
 */

/** Tool names come from the registry; a refused call's name is the caller's, so it is cut short. */
const MAX_NAME = 200;

/** Spans of calls, for the engine (`EngineOptions.tracer`). */
export const callTracer: CallTracer = {
  run(call: Call, begin: () => void): void {
    const definition = call.tool.definition;
    const parent = otel.context.active();
    const under = callParent(parent, `call ${definition.name}`);
    if (!under) return begin();
    const span = tracer.startSpan(
      `call ${definition.name}`,
      {
        kind: otel.SpanKind.INTERNAL,
        attributes: {
          'a2e.tool.name': definition.name,
          'a2e.tool.kind': definition.kind,
          'a2e.call.door': call.door,
          'a2e.call.id': call.id,
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': definition.name,
          ...(call.caller.principal === null ? {} : { 'a2e.principal': call.caller.principal }),
        },
      },
      under,
    );
    otel.context.with(otel.trace.setSpan(parent, span), begin);
    void call.result.then(({ data }) => {
      span.setAttribute('a2e.call.outcome', data.success ? 'success' : (data.error_code ?? 'tool_error'));
      span.setAttribute('a2e.call.duration_ms', data.duration_ms);
      if (call.stoppedBy) span.setAttribute('a2e.call.stopped_by', call.stoppedBy);
      if (data.truncated) span.setAttribute('a2e.call.truncated', true);
      if (!data.success) span.setStatus({ code: otel.SpanStatusCode.ERROR });
      span.end();
    });
  },
  refused({ tool_name, kind, door, error_code }): void {
    const name = tool_name.slice(0, MAX_NAME);
    // Span names stay few: a made-up tool name goes in the attribute only.
    const spanName = kind === null ? 'call (unknown tool)' : `call ${name}`;
    const under = callParent(otel.context.active(), spanName);
    if (!under) return;
    const span = tracer.startSpan(
      spanName,
      {
        kind: otel.SpanKind.INTERNAL,
        attributes: {
          'a2e.tool.name': name,
          ...(kind === null ? {} : { 'a2e.tool.kind': kind }),
          'a2e.call.door': door,
          'a2e.call.outcome': error_code,
          'a2e.call.duration_ms': 0,
        },
      },
      under,
    );
    span.setStatus({ code: otel.SpanStatusCode.ERROR });
    span.end();
  },
};

/** The context a call's span starts under: a recorded request's, or a sampled root of its own (mcp-stdio); else none. */
function callParent(parent: Context, name: string): Context | undefined {
  const span = otel.trace.getSpan(parent);
  if (span) return span.isRecording() ? parent : undefined;
  return rootCalls ? sample(parent, name, otel.SpanKind.INTERNAL) : undefined;
}

/** A span of ours with the context that has it as the active span. */
export class ActiveSpan {
  constructor(
    readonly span: Span,
    readonly context: Context,
    /** A client span (an outgoing hop): a 4xx answer marks it failed too. */
    private readonly client: boolean,
  ) {}

  /** Run `fn` with this span active: spans started and requests sent inside are its children. */
  run<T>(fn: () => T): T {
    return otel.context.with(this.context, fn);
  }

  /** Add this span's `traceparent` (and `tracestate`) to a header record; returns it. */
  inject<H extends Record<string, string>>(headers: H): H {
    otel.propagation.inject(this.context, headers);
    return headers;
  }

  /** An HTTP answer's status; 4xx and 5xx mark a client span failed, only 5xx a server span. */
  status(code: number): void {
    this.span.setAttribute('http.response.status_code', code);
    if (code >= 500 || (code >= 400 && this.client)) this.span.setStatus({ code: otel.SpanStatusCode.ERROR });
  }

  /** The hop failed: its error's type only (a message may quote what the peer was sent). */
  fail(err: unknown): void {
    const { code, name } = (err ?? {}) as { code?: unknown; name?: unknown };
    // A string code (ECONNREFUSED, UND_ERR_…) says most; else the error's class (PeerError, TimeoutError).
    const type = typeof code === 'string' && code ? code : typeof name === 'string' && name ? name : 'error';
    this.span.setAttribute('error.type', type.slice(0, 100));
    this.span.setStatus({ code: otel.SpanStatusCode.ERROR });
  }

  end(): void {
    this.span.end();
  }
}

/**
 * A client span for one outgoing hop, child of the active span (the call's). Only when `tracingOn`.
 * Send `inject(headers)` with the request, or `run` the client inside it. Under an unsampled caller's
 * context, no span: the same methods pass the caller's traceparent on as it came (its span's are no-ops).
 * Outside any trace, undefined.
 */
export function startClientSpan(name: string, attributes: () => Attributes): ActiveSpan | undefined {
  const parent = otel.context.active();
  const parentSpan = otel.trace.getSpan(parent);
  if (!parentSpan) return undefined;
  if (!parentSpan.isRecording()) return new ActiveSpan(parentSpan, parent, true);
  const span = tracer.startSpan(name, { kind: otel.SpanKind.CLIENT, attributes: attributes() }, parent);
  return new ActiveSpan(span, otel.trace.setSpan(parent, span), true);
}

/**
 * The trace of one incoming HTTP request, continuing the caller's when it sent a `traceparent`. Only when
 * `tracingOn`. A server span when the sampler records it; else the caller's context when it sent a
 * traceparent (to pass on, no span); else undefined, and nothing is to be done for the request.
 */
export function startServerSpan(
  name: string,
  headers: IncomingHttpHeaders,
  attributes: () => Attributes,
): ActiveSpan | Context | undefined {
  // No caller's trace: the sampler's draw for a new one is all an unsampled request costs.
  const parent =
    headers.traceparent === undefined ? otel.ROOT_CONTEXT : otel.propagation.extract(otel.ROOT_CONTEXT, headers);
  const under = parent === otel.ROOT_CONTEXT ? sampleNew() : sample(parent, name, otel.SpanKind.SERVER);
  if (!under) return parent === otel.ROOT_CONTEXT ? undefined : parent;
  const span = tracer.startSpan(name, { kind: otel.SpanKind.SERVER, attributes: attributes() }, under);
  return new ActiveSpan(span, otel.trace.setSpan(parent, span), false);
}

/** Run `fn` in `context` (a caller's, from startServerSpan): what it sends carries the caller's traceparent. */
export function runIn<T>(context: Context, fn: () => T): T {
  return otel.context.with(context, fn);
}

/** `server.address` and `server.port` of a URL (no path, query or credentials). */
export function serverAttributes(url: URL): Attributes {
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { 'server.address': url.hostname, 'server.port': port, 'url.scheme': url.protocol.slice(0, -1) };
}

/**
 * A fetch that sends the active span's `traceparent` (for clients that take a fetch, like the MCP SDK's
 * Streamable HTTP transport). Outside any span it adds nothing.
 */
export const tracedFetch = (url: string | URL, init?: RequestInit): Promise<Response> => tracedVia(fetch, url, init);

/** `base` (a fetch-like function), with the active span's `traceparent` added to each request's headers. */
export function tracedFetchOf(base: (url: string | URL, init?: RequestInit) => Promise<Response>): typeof tracedFetch {
  return (url, init) => tracedVia(base, url, init);
}

function tracedVia(
  base: (url: string | URL, init?: RequestInit) => Promise<Response>,
  url: string | URL,
  init?: RequestInit,
): Promise<Response> {
  const headers = new Headers(init?.headers);
  otel.propagation.inject(otel.context.active(), headers, { set: (h, key, value) => h.set(key, value) });
  return base(url, { ...init, headers });
}

/** Headers plus the active span's `traceparent`, unless they carry one already (a copy; the given record is kept). */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  if (headers.traceparent !== undefined) return headers;
  const out = { ...headers };
  otel.propagation.inject(otel.context.active(), out);
  return out;
}
