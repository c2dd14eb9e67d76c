/**
 * The memory budgets under `limits`: what the gateway may hold for callers,
 * in bytes, not counts. Defaults are sized for a 512 MB heap; docs/limits.md
 * explains each one. Merged into the `limits` section (src/config/schema.ts).
 */
import { z } from 'zod';
import { LimitsConfig } from '../security/config.js';

const MiB = 1024 * 1024;

export const memoryLimitFields = {
  /** Frames an A2E transport session holds for its stream (queued + kept for resumption); POST /send gets 429 beyond it. */
  outbox_session_bytes: z
    .int()
    .min(64 * 1024)
    .default(8 * MiB),
  /** Frames all A2E transport sessions hold together; POST /send gets 429 beyond it. */
  outbox_total_bytes: z
    .int()
    .min(64 * 1024)
    .default(64 * MiB),
  /** Events one running call keeps (for replay and for watchers that lag); the oldest are dropped beyond it. */
  call_events_bytes: z
    .int()
    .min(64 * 1024)
    .default(8 * MiB),
  /** Events a finished call keeps; trimmed to it when the call settles (less what a following reader has still to take). */
  call_retained_events_bytes: z.int().min(0).default(MiB),
  /** Events all running calls keep together; beyond it, a call that emits drops its oldest events. */
  events_total_bytes: z
    .int()
    .min(MiB)
    .default(64 * MiB),
  /** Finished call resources (POST /tool/calls) kept together, events and result; the oldest finished are dropped first. */
  retained_calls_bytes: z
    .int()
    .min(MiB)
    .default(64 * MiB),
  /** Bytes an SSE stream writes before it waits for the client to take them. */
  stream_unsent_bytes: z
    .int()
    .min(16 * 1024)
    .default(MiB),
  /** A stream whose client takes nothing for this long while output waits is cut with a final frame, seconds. */
  stream_stall_s: z.number().positive().default(30),
};

/** `limits`: the security layer's limits plus the memory budgets. */
export const LimitsSection = LimitsConfig.extend(memoryLimitFields);
export type LimitsSection = z.output<typeof LimitsSection>;
