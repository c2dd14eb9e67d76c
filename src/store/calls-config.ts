/** The `calls:` config section: events kept per call, and how long finished call resources are kept. */
import { z } from 'zod';

export const CallsConfig = z.strictObject({
  /** Events kept per call for replay. */
  max_events: z.int().positive().default(10_000),
  /** Hard cap on events buffered for a slow stream reader. */
  max_buffered_events: z.int().positive().default(1_000_000),
  /** How long a finished call resource (POST /tool/calls) stays readable, seconds. */
  retain_s: z.number().positive().default(300),
  /**
   * Most finished call resources kept of one token (one JWT subject; anonymous callers share one): its own oldest
   * finished ones are dropped first, so one caller's many calls never push out another's.
   */
  max_retained_per_principal: z.int().positive().default(1000),
  /** Most finished call resources kept of all tokens together: the backstop; beyond it the oldest finished of all are dropped. */
  max_retained: z.int().positive().default(10_000),
  /** Reconnect delay hinted to EventSource clients (the SSE `retry:` field), milliseconds. */
  retry_ms: z.int().min(0).default(2000),
  /**
   * With `store.kind: redis`: how long the instance running a call holds its lease (renewed well before it lapses):
   * call resources and calls sent over the A2E transport alike. When a lease lapses because its instance died, any
   * instance fails the call, and its watchers get a final answer saying so. After Redis lost its data, a reader on
   * another instance waits this long for the call's instance to re-create it before answering 404. Seconds.
   */
  owner_lease_s: z.number().positive().default(10),
});
export type CallsConfig = z.output<typeof CallsConfig>;
