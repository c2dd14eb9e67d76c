/**
 * Finished spans as an OTLP/HTTP JSON export request, written as text straight from the spans' fields: the same
 * JSON the SDK's JsonTraceSerializer sends (test/observability/otlp-json.test.ts compares them), without its
 * intermediate object per span, attribute and value, its BigInt per timestamp and its second pass through
 * JSON.stringify and TextEncoder (~11 µs of an exported call's CPU, bench scenario 15). The resource and the
 * instrumentation scope, the same for every span of a process, are written once.
 */
import type { HrTime, Link } from '@opentelemetry/api';
import type { IExportTraceServiceResponse, ISerializer } from '@opentelemetry/otlp-transformer';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** OTLP span flags: the W3C trace flags in the low byte, then "has is_remote" and "is_remote". */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

export const otlpJsonTraceSerializer: ISerializer<ReadableSpan[], IExportTraceServiceResponse> = {
  serializeRequest(spans) {
    const out = new ByteWriter(spans.length * 1024);
    writeExportRequest(spans, out);
    return out.bytes();
  },
  deserializeResponse(data) {
    if (data.length === 0) return {};
    try {
      return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
    } catch {
      // A collector's answer is only read for partial-success counts: unreadable, it is taken as none.
      return {};
    }
  },
};

/** `{"resourceSpans":[…]}` for these spans, as text. */
export function exportRequestJson(spans: readonly ReadableSpan[]): string {
  const out = { text: '', write: (s: string) => void (out.text += s) };
  writeExportRequest(spans, out);
  return out.text;
}

interface Sink {
  write(text: string): void;
}

/**
 * UTF-8 bytes written piece by piece (a span's JSON at a time): each piece is flattened and encoded while it is
 * small, instead of one long string of thousands of joined pieces flattened and encoded at the end.
 */
class ByteWriter implements Sink {
  private buf: Buffer;
  private length = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(size, 1024));
  }

  write(text: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8.
    if (this.buf.length - this.length < text.length * 3) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + text.length * 3));
      this.buf.copy(bigger, 0, 0, this.length);
      this.buf = bigger;
    }
    this.length += this.buf.write(text, this.length, 'utf8');
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** The export request, grouped by resource, then by instrumentation scope, as the SDK groups it. */
function writeExportRequest(spans: readonly ReadableSpan[], out: Sink): void {
  const byResource = new Map<Resource, Map<string, ReadableSpan[]>>();
  for (const span of spans) {
    let byScope = byResource.get(span.resource);
    if (!byScope) byResource.set(span.resource, (byScope = new Map()));
    const scope = span.instrumentationScope;
    const key = `${scope.name}@${scope.version || ''}:${scope.schemaUrl || ''}`;
    const list = byScope.get(key);
    if (list) list.push(span);
    else byScope.set(key, [span]);
  }
  out.write('{"resourceSpans":[');
  let firstResource = true;
  for (const [resource, byScope] of byResource) {
    out.write(`${firstResource ? '' : ','}{"resource":${resourceJson(resource)},"scopeSpans":[`);
    firstResource = false;
    let firstScope = true;
    for (const list of byScope.values()) {
      const scope = list[0]!.instrumentationScope;
      out.write(`${firstScope ? '' : ','}{"scope":${scopeJson(scope)},"spans":[`);
      firstScope = false;
      for (let i = 0; i < list.length; i++) out.write((i === 0 ? '' : ',') + spanJson(list[i]!));
      out.write(`]${scope.schemaUrl === undefined ? '' : `,"schemaUrl":${quote(scope.schemaUrl)}`}}`);
    }
    out.write(`]${resource.schemaUrl ? `,"schemaUrl":${quote(resource.schemaUrl)}` : ''}}`);
  }
  out.write(']}');
}

/** Characters JSON.stringify would escape (or check, for surrogates): a string without any is written as it is. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is looked for
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;

/** A JSON string: most are plain (ids, names, keys), and one regex test is cheaper than a JSON.stringify call. */
function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

const resourceCache = new WeakMap<Resource, string>();

function resourceJson(resource: Resource): string {
  const cached = resourceCache.get(resource);
  if (cached !== undefined) return cached;
  const schemaUrl = resource.schemaUrl ? `,"schemaUrl":${quote(resource.schemaUrl)}` : '';
  const json = `{"attributes":${attributesJson(resource.attributes)},"droppedAttributesCount":0${schemaUrl}}`;
  // Attributes a detector has yet to settle may still change: kept only once they are final.
  if (!resource.asyncAttributesPending) resourceCache.set(resource, json);
  return json;
}

const scopeCache = new WeakMap<ReadableSpan['instrumentationScope'], string>();

function scopeJson(given: ReadableSpan['instrumentationScope']): string {
  let json = scopeCache.get(given);
  if (json === undefined) {
    // Scopes may carry attributes (a newer API than the type says): written as the SDK writes them.
    const scope = given as typeof given & { attributes?: Record<string, unknown>; droppedAttributesCount?: number };
    const attributes =
      scope.attributes && Object.keys(scope.attributes).length > 0
        ? `,"attributes":${attributesJson(scope.attributes)},"droppedAttributesCount":${scope.droppedAttributesCount ?? 0}`
        : '';
    const version = scope.version === undefined ? '' : `,"version":${quote(scope.version)}`;
    json = `{"name":${quote(scope.name)}${version}${attributes}}`;
    scopeCache.set(given, json);
  }
  return json;
}

function spanJson(span: ReadableSpan): string {
  const ctx = span.spanContext();
  const parent = span.parentSpanContext;
  const status = span.status;
  const state = ctx.traceState?.serialize();
  return (
    `{"traceId":${quote(ctx.traceId)},"spanId":${quote(ctx.spanId)}` +
    (parent?.spanId ? `,"parentSpanId":${quote(parent.spanId)}` : '') +
    (state === undefined ? '' : `,"traceState":${quote(state)}`) +
    `,"name":${quote(span.name)},"kind":${span.kind == null ? 0 : span.kind + 1}` +
    `,"startTimeUnixNano":"${nanos(span.startTime)}","endTimeUnixNano":"${nanos(span.endTime)}"` +
    `,"attributes":${attributesJson(span.attributes)},"droppedAttributesCount":${span.droppedAttributesCount}` +
    `,"events":[${span.events.length === 0 ? '' : span.events.map(eventJson).join(',')}]` +
    `,"droppedEventsCount":${span.droppedEventsCount}` +
    `,"status":{"code":${status.code}${status.message === undefined ? '' : `,"message":${quote(status.message)}`}}` +
    `,"links":[${span.links.length === 0 ? '' : span.links.map(linkJson).join(',')}]` +
    `,"droppedLinksCount":${span.droppedLinksCount},"flags":${flags(ctx.traceFlags, parent?.isRemote)}}`
  );
}

function eventJson(event: TimedEvent): string {
  return (
    `{"attributes":${event.attributes ? attributesJson(event.attributes) : '[]'},"name":${quote(event.name)}` +
    `,"timeUnixNano":"${nanos(event.time)}","droppedAttributesCount":${event.droppedAttributesCount || 0}}`
  );
}

function linkJson(link: Link): string {
  const state = link.context.traceState?.serialize();
  return (
    `{"attributes":${link.attributes ? attributesJson(link.attributes) : '[]'},"spanId":${quote(link.context.spanId)}` +
    `,"traceId":${quote(link.context.traceId)}${state === undefined ? '' : `,"traceState":${quote(state)}`}` +
    `,"droppedAttributesCount":${link.droppedAttributesCount || 0}` +
    `,"flags":${flags(link.context.traceFlags, link.context.isRemote)}}`
  );
}

function flags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

/** An hrtime as decimal nanoseconds: more digits than a double holds exactly, so written, not multiplied. */
function nanos(time: HrTime): string {
  const seconds = Math.trunc(time[0]);
  const ns = Math.trunc(time[1]);
  if (seconds > 0 && ns >= 0 && ns < 1e9) return `${seconds}${String(ns).padStart(9, '0')}`;
  return (BigInt(seconds) * 1_000_000_000n + BigInt(ns)).toString();
}

/** `{"key":…,"value":` of each attribute name seen: the gateway's names are a few constants. */
const keyPrefixes = new Map<string, string>();
const MAX_KEYS = 512;

function attributesJson(attributes: Record<string, unknown>): string {
  let out = '[';
  for (const key in attributes) {
    if (!Object.hasOwn(attributes, key)) continue;
    let prefix = keyPrefixes.get(key);
    if (prefix === undefined) {
      prefix = `{"key":${quote(key)},"value":`;
      if (keyPrefixes.size < MAX_KEYS) keyPrefixes.set(key, prefix);
    }
    out += `${out.length === 1 ? '' : ','}${prefix}${anyValueJson(attributes[key])}}`;
  }
  return `${out}]`;
}

/** One OTLP AnyValue, as the SDK's toAnyValue makes it. */
function anyValueJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return `{"stringValue":${quote(value)}}`;
    case 'number':
      return Number.isInteger(value) ? `{"intValue":${value}}` : `{"doubleValue":${JSON.stringify(value)}}`;
    case 'boolean':
      return `{"boolValue":${value}}`;
  }
  if (value instanceof Uint8Array) return `{"bytesValue":"${Buffer.from(value).toString('base64')}"}`;
  if (Array.isArray(value)) return `{"arrayValue":{"values":[${value.map(anyValueJson).join(',')}]}}`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const entries = Object.keys(record).map((k) => `{"key":${quote(k)},"value":${anyValueJson(record[k])}}`);
    return `{"kvlistValue":{"values":[${entries.join(',')}]}}`;
  }
  return '{}';
}
