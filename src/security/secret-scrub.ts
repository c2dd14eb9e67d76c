/**
 * Brokered secrets kept from callers when a peer echoes them: an MCP server
 * or an A2A agent the gateway authenticates to may put the header it received
 * in a result, an event or an error. A call to such a source runs through
 * `scrubbedCall`, which replaces every secret value the source's credential
 * holds with "[redacted]" in all three (the OpenAPI path scrubs the text it
 * reads before parsing it, exchange.ts).
 */
import { ToolError, type ToolContext } from '../engine/index.js';
import { scrub } from './credential.js';

/** `value` with every secret replaced in its strings (keys included); the same object when none occurs. */
export function scrubValue<T>(value: T, secrets: readonly string[]): T {
  if (typeof value === 'string') {
    for (const s of secrets) if (value.includes(s)) return scrub(value, secrets) as T;
    return value;
  }
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = scrubValue(item, secrets);
      if (next !== item) (out ??= [...value])[i] = next;
    });
    return (out ?? value) as T;
  }
  if (value !== null && typeof value === 'object') {
    let out: Record<string, unknown> | undefined;
    for (const [k, item] of Object.entries(value)) {
      const key = scrubValue(k, secrets);
      const next = scrubValue(item, secrets);
      if (key === k && next === item) continue;
      out ??= { ...(value as Record<string, unknown>) };
      if (key !== k) delete out[k];
      out[key] = next;
    }
    return (out ?? value) as T;
  }
  return value;
}

/** `err` with the secrets gone from its message (and a ToolError's data). */
export function scrubError(err: unknown, secrets: readonly string[]): unknown {
  if (!(err instanceof Error) || secrets.length === 0) return err;
  if (err instanceof ToolError) {
    const e = err as ToolError;
    const message = scrub(e.message, secrets);
    const data = scrubValue(e.data, secrets);
    if (message === e.message && data === e.data) return err;
    return new ToolError(message, { data, exitCode: e.exitCode, truncated: e.truncated });
  }
  err.message = scrub(err.message, secrets);
  return err;
}

/** `ctx` whose events have the secrets replaced. */
class ScrubbedContext implements ToolContext {
  readonly emit: ToolContext['emit'];
  constructor(
    private readonly ctx: ToolContext,
    secrets: () => readonly string[],
  ) {
    this.emit = (kind, data) => ctx.emit(kind, scrubValue(data, secrets()));
  }
  get signal() {
    return this.ctx.signal;
  }
  onStop(listener: (reason: DOMException) => void) {
    return this.ctx.onStop(listener);
  }
  get deadline() {
    return this.ctx.deadline;
  }
  get streaming() {
    return this.ctx.streaming;
  }
  eventsTaken() {
    return this.ctx.eventsTaken();
  }
  get sessionId() {
    return this.ctx.sessionId;
  }
  get principal() {
    return this.ctx.principal;
  }
  get correlationId() {
    return this.ctx.correlationId;
  }
  get requestId() {
    return this.ctx.requestId;
  }
  get logger() {
    return this.ctx.logger;
  }
}

/**
 * Run a call to a source holding `secrets` with its events, result and error scrubbed of them. Without
 * secrets, `run(ctx)` as it is.
 */
export async function scrubbedCall<T>(
  secrets: () => readonly string[],
  ctx: ToolContext,
  run: (ctx: ToolContext) => Promise<T>,
): Promise<T> {
  if (secrets().length === 0) return run(ctx);
  let result: T;
  try {
    // Read at each use: a token fetched during the call (the first, or a renewal after a 401) is scrubbed too.
    result = await run(new ScrubbedContext(ctx, secrets));
  } catch (err) {
    throw scrubError(err, secrets());
  }
  return scrubValue(result, secrets());
}
