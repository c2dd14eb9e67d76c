/**
 * One parser per message schema, made once: zod's checks (with the id/ts
 * fill-in of `messageParser`), preceded by a hand-written fast path for the
 * messages on every call's hot path.
 */
import type { z } from 'zod';
import { messageParser } from './base.js';
import { fastToolCallRequest } from './fast-call-request.js';
import { ToolCallRequest } from './tools.js';

export type MessageParser<S extends z.ZodType> = (input: unknown) => z.ZodSafeParseResult<z.output<S>>;

type FastPath = (input: Record<string, unknown>) => unknown;
const FAST_PATHS = new Map<z.ZodType, FastPath>([[ToolCallRequest, fastToolCallRequest]]);
const parsers = new WeakMap<z.ZodType, MessageParser<z.ZodType>>();

export function parserFor<S extends z.ZodType>(schema: S): MessageParser<S> {
  let parse = parsers.get(schema);
  if (!parse) {
    const checked = messageParser(schema);
    const fast = FAST_PATHS.get(schema);
    parse = fast
      ? (input) => {
          const value =
            input !== null && typeof input === 'object' ? fast(input as Record<string, unknown>) : undefined;
          return value !== undefined ? { success: true, data: value } : checked(input);
        }
      : checked;
    parsers.set(schema, parse);
  }
  return parse as MessageParser<S>;
}
