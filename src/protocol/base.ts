import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/** Protocol version spoken by this gateway. */
export const PROTOCOL_VERSION = '1.0';

/** A fresh message id (UUID v4). */
export const newId = (): string => randomUUID();

/** Current time as the A2E wire format wants it: Unix epoch seconds as a float. */
export const nowTs = (): number => Date.now() / 1000;

/**
 * Fields every A2E message carries. Missing `id` and `ts` are filled on parse,
 * so a client may omit them; `version` defaults to "1.0".
 */
export const messageFields = <T extends string>(type: T) => ({
  type: z.literal(type).default(type as never).meta({ description: 'Message type identifier', example: type }),
  // Filled by a transform, not .default(fn): a default function would be evaluated into the OpenAPI document.
  id: z
    .string()
    .optional()
    .transform((v) => v ?? newId())
    .meta({ description: 'Message UUID; generated when omitted' }),
  version: z.string().default(PROTOCOL_VERSION).meta({ description: 'Protocol version' }),
  ts: z
    .number()
    .optional()
    .transform((v) => v ?? nowTs())
    .meta({ description: 'Unix epoch timestamp (seconds, float); filled when omitted' }),
});
