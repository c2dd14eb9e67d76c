/**
 * A settled call's response as JSON text, written around the JSON of its result's data that measuring it against
 * the output cap already made (the data is not serialised twice): exactly `JSON.stringify(response) + after`.
 * Hand-written because per-field JSON.stringify was the largest part of the engine's own cost of a fast call
 * (see BENCHMARKS.md, scenario 1).
 */
import { PROTOCOL_VERSION, type ToolCallResponse, type ToolResult } from '../protocol/index.js';

/**
 * `JSON.stringify(r) + after`, with the result's data written from `dataJson` (its JSON text, or its UTF-8 bytes,
 * which then go out as they are) when given; `dataIsText`: the data came as JSON text (JsonText), so reading it
 * parses it and is not done here.
 */
export function responseJson(
  r: ToolCallResponse,
  dataJson: string | Uint8Array | null,
  dataIsText: boolean,
  after: string,
): string | Uint8Array<ArrayBuffer> {
  const d = r.data;
  const around =
    dataJson === null || (!dataIsText && hasOwnToJson(d.data)) || d.events.length !== 0
      ? undefined
      : responseAround(r, d);
  if (around === undefined) return JSON.stringify(r) + after;
  const [head, tail] = around;
  return typeof dataJson === 'string' ? head + dataJson + tail + after : utf8Between(head, dataJson!, tail + after);
}

/**
 * The JSON of a response around its result's data (already serialised): the text before it and after it,
 * member for member what JSON.stringify writes for the response; undefined (use JSON.stringify) when a field
 * is not of the type settle() gives it. Built by concatenation with the fixed text as literals, and the
 * timestamp (twice in a response) written once: per-field JSON.stringify made this the largest part of the
 * engine's own cost of a fast call.
 */
function responseAround(r: ToolCallResponse, d: ToolResult): [head: string, tail: string] | undefined {
  // Only the members written below: a response or result carrying another one is left to JSON.stringify.
  if (memberCount(r) !== RESPONSE_MEMBERS || memberCount(d) !== RESULT_MEMBERS) return undefined;
  const summary = nullableJson(d.summary);
  const exitCode = nullableJson(d.exit_code);
  const error = nullableJson(d.error);
  const errorCode = nullableJson(d.error_code);
  const ts = numberJson(r.ts);
  const createdAt = r.created_at === r.ts ? ts : numberJson(r.created_at);
  const durationMs = numberJson(d.duration_ms);
  if (
    typeof d.success !== 'boolean' ||
    typeof d.truncated !== 'boolean' ||
    typeof r.id !== 'string' ||
    typeof r.req_id !== 'string' ||
    typeof d.tool_name !== 'string' ||
    summary === undefined ||
    exitCode === undefined ||
    error === undefined ||
    errorCode === undefined ||
    ts === undefined ||
    createdAt === undefined ||
    durationMs === undefined
  ) {
    return undefined;
  }
  const type =
    r.type === 'tool/call/resp' ? '{"type":"tool/call/resp","id":' : '{"type":' + JSON.stringify(r.type) + ',"id":';
  const version =
    r.version === PROTOCOL_VERSION ? VERSION_MEMBER : ',"version":' + JSON.stringify(r.version) + ',"ts":';
  return [
    type +
      JSON.stringify(r.id) +
      version +
      ts +
      ',"req_id":' +
      JSON.stringify(r.req_id) +
      (d.success ? ',"data":{"success":true,"tool_name":' : ',"data":{"success":false,"tool_name":') +
      JSON.stringify(d.tool_name) +
      ',"data":',
    ',"summary":' +
      summary +
      (d.truncated ? ',"truncated":true,"exit_code":' : ',"truncated":false,"exit_code":') +
      exitCode +
      ',"error":' +
      error +
      ',"error_code":' +
      errorCode +
      ',"duration_ms":' +
      durationMs +
      ',"events":[]},"created_at":' +
      createdAt +
      '}',
  ];
}

const VERSION_MEMBER = `,"version":${JSON.stringify(PROTOCOL_VERSION)},"ts":`;

/** `head`, `bytes` and `tail` as one UTF-8 buffer: one allocation, the bytes copied as they are. */
function utf8Between(head: string, bytes: Uint8Array, tail: string): Uint8Array<ArrayBuffer> {
  const headBytes = Buffer.byteLength(head);
  const out = Buffer.allocUnsafe(headBytes + bytes.byteLength + Buffer.byteLength(tail));
  out.write(head, 0);
  out.set(bytes, headBytes);
  out.write(tail, headBytes + bytes.byteLength);
  return out;
}

const RESPONSE_MEMBERS = 7; // type, id, version, ts, req_id, data, created_at
const RESULT_MEMBERS = 10; // success, tool_name, data, summary, truncated, exit_code, error, error_code, duration_ms, events

/** How many members JSON.stringify would see (without making the array Object.keys makes). */
function memberCount(o: object): number {
  let n = 0;
  for (const key in o) if (Object.hasOwn(o, key)) n++;
  return n;
}

/** JSON of a number (String() writes what JSON.stringify does for a finite one; JSON writes null otherwise); undefined for anything else. */
function numberJson(v: unknown): string | undefined {
  if (typeof v !== 'number') return undefined;
  return Number.isFinite(v) ? String(v) : 'null';
}

/** JSON of null, a string or a number; undefined for anything else (what a result's optional fields may hold). */
function nullableJson(v: unknown): string | undefined {
  if (v === null) return 'null';
  return typeof v === 'string' ? JSON.stringify(v) : numberJson(v);
}

/** A value whose own toJSON would be called with another key at the top level than nested: serialised in place. */
function hasOwnToJson(v: unknown): boolean {
  return v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function';
}
