/**
 * Reading one A2E message from bytes, the same for every door (REST bodies,
 * transport messages): strict UTF-8, a nesting pre-scan, one JSON.parse, an
 * object check, one schema check. Every refusal is an `invalid_request`
 * saying what was wrong and how to fix it; a door only chooses the words
 * that name what it read ("request body", "the message").
 */
import type { z } from 'zod';
import { formatProblems, parserFor, toProblems } from '../protocol/index.js';
import { GatewayError } from './errors.js';

/** How a door names what it read, in its errors. */
export interface MessageWording {
  /** The thing read, as the subject of a sentence: "request body", "the message". */
  subject: string;
  /** Prefix of a schema refusal: "invalid request", "invalid message". */
  invalid: string;
  /** What to send instead of nothing. */
  emptyHint: string;
  /** What a non-object should have been. */
  objectHint: string;
}

/** Deepest nesting accepted when the caller does not say (limits.max_json_depth's default). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** What a door reads messages with, from the config (the HTTP doors' limits include it). */
export interface MessageLimits {
  /** `limits.max_json_depth`: the deepest nesting of arrays/objects, checked before parsing. */
  maxJsonDepth: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Whether the JSON text nests arrays/objects deeper than `max`. A byte scan
 * before parsing: hostile nesting is refused before anything recursive
 * (validation, JSON.stringify) could overflow the stack on it.
 */
export function nestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  // Each level takes two bytes ("[]"), so a short body cannot nest too deep: skip the scan.
  if (bytes.byteLength <= 2 * max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      if (++depth > max) return true;
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return false;
}

/**
 * Bytes → a JSON object. `maxDepth` (limits.max_json_depth) is checked before
 * parsing when given.
 */
export function decodeMessage(bytes: Uint8Array, wording: MessageWording, maxDepth?: number): Record<string, unknown> {
  const { subject } = wording;
  if (bytes.byteLength === 0) throw new GatewayError('invalid_request', `${subject} is empty; ${wording.emptyHint}`);
  if (maxDepth !== undefined && nestsDeeperThan(bytes, maxDepth)) {
    throw new GatewayError(
      'invalid_request',
      `${subject} nests arrays/objects deeper than ${maxDepth} levels (limits.max_json_depth); flatten the data`,
      {
        detail: { max_depth: maxDepth },
      },
    );
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new GatewayError('invalid_request', `${subject} is not valid UTF-8; encode the JSON as UTF-8`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    if (!text.trim()) throw new GatewayError('invalid_request', `${subject} is empty; ${wording.emptyHint}`);
    throw new GatewayError('invalid_request', `${subject} is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new GatewayError('invalid_request', `${subject} must be ${wording.objectHint}`);
  }
  return json as Record<string, unknown>;
}

/** A decoded object → the message `schema` describes, or an invalid_request listing each problem. */
export function checkMessage<S extends z.ZodType>(schema: S, json: unknown, wording: MessageWording): z.output<S> {
  const r = parserFor(schema)(json);
  if (!r.success) {
    const problems = toProblems(r.error.issues);
    throw new GatewayError('invalid_request', `${wording.invalid}: ${formatProblems(problems)}`, {
      detail: { problems },
    });
  }
  return r.data;
}
