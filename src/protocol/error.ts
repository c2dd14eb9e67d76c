import { z } from 'zod';
import { messageFields } from './base.js';

/**
 * Machine-readable error codes. The first three are the spec's ToolErrorCode;
 * the rest are the gateway's request-level errors.
 */
export const ERROR_CODES = [
  'unknown_tool',
  'tool_denied',
  'tool_error',
  'invalid_request',
  'invalid_arguments',
  'payload_too_large',
  'unauthorized',
  'forbidden',
  'rate_limited',
  'not_found',
  'method_not_allowed',
  'unavailable',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The A2E base error message. */
export const ErrorMessage = z
  .object({
    ...messageFields('error'),
    req_id: z.string().default('').meta({ description: 'Id of the request that failed, when known' }),
    code: z.string().meta({ description: 'Machine-readable error code', example: 'invalid_arguments' }),
    message: z.string().meta({ description: 'What was wrong and how to fix it' }),
    capability_name: z
      .string()
      .default('')
      .meta({ description: 'The capability the failed message belongs to: "tools" for tool messages, "" otherwise' }),
    detail: z
      .record(z.string(), z.unknown())
      .default({})
      .meta({ description: 'Structured detail, e.g. the list of validation problems ({} when there is none)' }),
    retryable: z.boolean().default(false).meta({ description: 'Whether retrying the same request may succeed' }),
  })
  .meta({ id: 'Error', description: 'An A2E error message' });
export type ErrorMessage = z.output<typeof ErrorMessage>;
