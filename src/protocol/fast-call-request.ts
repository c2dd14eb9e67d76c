/**
 * A fast path for the one message on every call's hot path: a well-formed
 * tool/call/req is checked here by hand in a fraction of zod's time. It
 * accepts only what the `ToolCallRequest` schema accepts and returns exactly
 * what that schema returns (a test compares both on a corpus of messages);
 * anything else — an unknown field, a wrong type, a null — returns undefined
 * and goes through the schema, which also words the errors.
 */
import { PROTOCOL_VERSION, newId, nowTs } from './base.js';
import { FIELD_LIMITS } from './field-limits.js';
import type { ToolCallRequest } from './tools.js';

const FIELDS = new Set([
  'type',
  'id',
  'version',
  'ts',
  'session_id',
  'tool_name',
  'arguments',
  'correlation_id',
  'streaming',
  'timeout',
]);

const optionalString = (v: unknown, max: number) => v === undefined || (typeof v === 'string' && v.length <= max);

export function fastToolCallRequest(input: Record<string, unknown>): ToolCallRequest | undefined {
  for (const key in input) if (!FIELDS.has(key)) return undefined;
  const { type, id, version, ts, session_id, tool_name, correlation_id, streaming, timeout } = input;
  const args = input.arguments;
  if (type !== undefined && type !== 'tool/call/req') return undefined;
  if (typeof tool_name !== 'string' || tool_name.length === 0 || tool_name.length > FIELD_LIMITS.name) return undefined;
  const { id: maxId, version: maxVersion } = FIELD_LIMITS;
  if (
    !optionalString(id, maxId) ||
    !optionalString(version, maxVersion) ||
    !optionalString(session_id, maxId) ||
    !optionalString(correlation_id, maxId)
  ) {
    return undefined;
  }
  if (ts !== undefined && (typeof ts !== 'number' || !Number.isFinite(ts))) return undefined;
  if (streaming !== undefined && typeof streaming !== 'boolean') return undefined;
  if (timeout !== undefined && !(Number.isSafeInteger(timeout) && (timeout as number) > 0)) return undefined;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return undefined;
  // The schema's record copies the arguments; so does this (only own keys, as JSON.parse makes them).
  const copy: Record<string, unknown> = {};
  for (const key in args) {
    if (key === '__proto__') return undefined; // rare: let the schema decide what to do with it
    copy[key] = (args as Record<string, unknown>)[key];
  }
  return {
    type: 'tool/call/req',
    id: (id as string | undefined) ?? newId(),
    version: (version as string | undefined) ?? PROTOCOL_VERSION,
    ts: (ts as number | undefined) ?? nowTs(),
    session_id: (session_id as string | undefined) ?? '',
    tool_name,
    arguments: copy,
    correlation_id: (correlation_id as string | undefined) ?? '',
    streaming: (streaming as boolean | undefined) ?? false,
    timeout: (timeout as number | undefined) ?? 30,
  };
}
