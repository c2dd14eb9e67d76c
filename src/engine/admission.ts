/**
 * What a call must pass before it runs, whatever door it came through:
 * the per-token rate limit, the per-session and gateway-wide concurrency
 * caps, and the shape limits on its arguments (depth, string length, array
 * size). Lives in the engine so the REST routes and the A2E transport share it.
 */
import type { Problem } from '../protocol/index.js';
import { GatewayError } from './errors.js';
import type { Caller } from './policy.js';

/** A rate limiter keyed by principal; in memory here, swappable for a shared store. */
export interface RateLimiter {
  /** Take one unit for `key`: 0 when allowed, else seconds until one is available. */
  take(key: string): number;
}

/** Token bucket per key: `ratePerS` refill, `burst` capacity. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  take(key: string): number {
    const now = this.now();
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.ratePerS);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / this.ratePerS;
  }
}

export interface ArgumentLimits {
  maxDepth: number;
  maxStringLength: number;
  maxArrayItems: number;
}

export interface AdmissionOptions extends ArgumentLimits {
  /** Calls running at once across the gateway (0 = no limit). */
  maxConcurrentCalls: number;
  /** Calls running at once per session (0 = no limit). */
  maxParallelPerSession: number;
  /** Applied per authenticated principal; anonymous callers are not rate limited. */
  rateLimiter?: RateLimiter;
}

export const NO_ADMISSION_LIMITS: AdmissionOptions = Object.freeze({
  maxConcurrentCalls: 0,
  maxParallelPerSession: 0,
  maxDepth: 10_000,
  maxStringLength: Number.MAX_SAFE_INTEGER,
  maxArrayItems: Number.MAX_SAFE_INTEGER,
});

/**
 * The first value in `value` breaking a limit, walking iteratively (no
 * recursion, so hostile nesting cannot overflow the stack).
 */
export function checkShape(value: unknown, limits: ArgumentLimits, root = 'arguments'): Problem | null {
  const tooLong = (v: string, path: string): Problem => ({
    path,
    message: `string of ${v.length} characters is longer than ${limits.maxStringLength} (limits.max_string_length)`,
  });
  if (typeof value === 'string') return value.length > limits.maxStringLength ? tooLong(value, root) : null;
  if (value === null || typeof value !== 'object') return null;
  // Only containers go on the stack, with their path; scalars are checked in place (no path is built
  // for them unless they break a limit), so a flat argument object costs no allocation.
  const stack: [object, string, number][] = [[value, root, 1]];
  while (stack.length) {
    const [v, path, depth] = stack.pop()!;
    if (depth > limits.maxDepth)
      return { path, message: `nested deeper than ${limits.maxDepth} levels (limits.max_json_depth)` };
    if (Array.isArray(v)) {
      if (v.length > limits.maxArrayItems) {
        return {
          path,
          message: `array of ${v.length} items is longer than ${limits.maxArrayItems} (limits.max_array_items)`,
        };
      }
      for (let i = v.length - 1; i >= 0; i--) {
        const item: unknown = v[i];
        if (typeof item === 'string') {
          if (item.length > limits.maxStringLength) return tooLong(item, `${path}.${i}`);
        } else if (item !== null && typeof item === 'object') stack.push([item, `${path}.${i}`, depth + 1]);
      }
    } else {
      for (const k of Object.keys(v)) {
        if (k.length > limits.maxStringLength) {
          return {
            path,
            message: `a key of ${k.length} characters is longer than ${limits.maxStringLength} (limits.max_string_length)`,
          };
        }
        const item: unknown = (v as Record<string, unknown>)[k];
        if (typeof item === 'string') {
          if (item.length > limits.maxStringLength) return tooLong(item, `${path}.${k}`);
        } else if (item !== null && typeof item === 'object') stack.push([item, `${path}.${k}`, depth + 1]);
      }
    }
  }
  return null;
}

export class Admission {
  private running = 0;
  private readonly perSession = new Map<string, number>();
  constructor(private options: AdmissionOptions) {}

  /** New limits for calls admitted from now on (a config reload); the slots of running calls stay counted. */
  update(options: AdmissionOptions): void {
    this.options = options;
  }

  get limits(): ArgumentLimits {
    return this.options;
  }

  /**
   * Admit one call for `caller` or throw (rate_limited, unavailable). The
   * returned function gives the slot back; call it exactly once.
   */
  admit(caller: Caller): () => void {
    const { rateLimiter, maxConcurrentCalls, maxParallelPerSession } = this.options;
    if (rateLimiter && caller.principal !== null) {
      const wait = rateLimiter.take(caller.principal);
      if (wait > 0) throw rateLimited(caller.principal, wait);
    }
    if (maxConcurrentCalls > 0 && this.running >= maxConcurrentCalls) throw this.gatewayFull();
    const session = caller.sessionId;
    const inSession = session ? (this.perSession.get(session) ?? 0) : 0;
    if (session && maxParallelPerSession > 0 && inSession >= maxParallelPerSession)
      throw sessionFull(maxParallelPerSession);
    this.running++;
    if (session) this.perSession.set(session, inSession + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      if (!session) return;
      const n = (this.perSession.get(session) ?? 1) - 1;
      if (n <= 0) this.perSession.delete(session);
      else this.perSession.set(session, n);
    };
  }

  /**
   * Take over a call the shared admission (store.kind redis) already decided
   * on: its refusal is thrown here, so every door words and audits it as the
   * engine does; an admitted call still counts against this instance's
   * `max_concurrent_calls`. The returned function gives both slots back.
   */
  adopt(admitted: Admitted): () => void {
    if ('refused' in admitted) throw admitted.refused;
    const { maxConcurrentCalls } = this.options;
    // Refused here, the shared slot is the caller's to give back (engine.start does).
    if (maxConcurrentCalls > 0 && this.running >= maxConcurrentCalls) throw this.gatewayFull();
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      admitted.release();
    };
  }

  private gatewayFull(): GatewayError {
    const max = this.options.maxConcurrentCalls;
    return new GatewayError(
      'unavailable',
      `the gateway is running its maximum of ${max} calls (limits.max_concurrent_calls); retry shortly`,
      {
        retryable: true,
        detail: { retry_after_s: 1 },
      },
    );
  }
}

/**
 * What the shared admission (store.kind redis) decided for one call before
 * engine.start: admitted, with the function giving its shared slot back
 * (calling it again does nothing), or refused with the error engine.start
 * throws (see Admission.adopt).
 */
export type Admitted = { release: () => void } | { refused: GatewayError };

/** The refusal of a call over its token's rate limit; `waitS` until a unit is available. */
export function rateLimited(principal: string, waitS: number): GatewayError {
  return new GatewayError(
    'rate_limited',
    `too many calls for token "${principal}" (limits.rate_per_s); retry after ${Math.ceil(waitS)} s`,
    {
      retryable: true,
      detail: { retry_after_s: Math.max(1, Math.ceil(waitS)) },
    },
  );
}

/** The refusal of a call in a session already running `maxParallel` calls. */
export function sessionFull(maxParallel: number): GatewayError {
  return new GatewayError(
    'rate_limited',
    `this session already runs ${maxParallel} calls (its max_parallel); wait for one to finish`,
    {
      retryable: true,
      detail: { retry_after_s: 1, max_parallel: maxParallel },
    },
  );
}
