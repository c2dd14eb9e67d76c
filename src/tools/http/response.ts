/**
 * One HTTP exchange of http_request as an undici dispatch handler: the
 * status, the headers and the body up to a byte cap, straight from the
 * connection. Cheaper than `dispatcher.request()`, which makes an async
 * resource, a body stream with its listeners and a second promise per request
 * (the profile showed them); the SSRF check is not here but in the connector
 * (dispatcher.ts), which every connection goes through either way.
 *
 * The handler speaks undici's own handler interface (onConnect, onHeaders,
 * onData, onComplete, onError: the one `undici.request` itself uses), not the
 * controller-based one, which undici wraps per request in an adapter that
 * also parses the raw headers into an object (the profile showed both); the
 * raw headers are flattened here in one pass instead.
 */
import type { Dispatcher } from 'undici';
import type { ToolContext } from '../../engine/index.js';

/** Emit a progress event every this many bytes received. */
const PROGRESS_STEP = 64 * 1024;
/** Most bytes of a redirect's body read (and dropped) to keep its connection; beyond, the connection is closed. */
const DISCARD_LIMIT = 128 * 1024;
/** First size of the body buffer when the response gives no length. */
const MIN_BUFFER = 16 * 1024;

export interface Answer {
  status: number;
  headers: Record<string, string>;
  bytes: Buffer;
  truncated: boolean;
}

/**
 * Aborts the exchange in flight (timeout, call stopped), one per call across
 * its redirects: a request not yet written is aborted as soon as it is.
 */
export class Abort {
  reason: Error | undefined;
  current: ResponseReader | undefined;

  abort(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    this.current?.abort(reason);
  }
}

/**
 * Decides, from a redirect's status and Location, whether it is followed: true = its body is dropped
 * (then `follow` has what the caller needs); false = it is the answer, body kept. May throw (a redirect
 * that cannot be followed): the body is dropped and the exchange fails with that error.
 */
export type RedirectCheck = (status: number, location: string) => boolean;

export class ResponseReader implements Dispatcher.DispatchHandler {
  /** undici's abort of this request, given when it is handed to a connection. */
  private abortRequest: ((err: Error) => void) | undefined;
  private aborted = false;
  private status = 0;
  private headers: Record<string, string> = {};
  /** The body so far: one chunk as received, or (from a second chunk on) `buffer`. */
  private first: Buffer | undefined;
  private buffer: Buffer | undefined;
  private kept = 0;
  private received = 0;
  private total = Number.NaN;
  private nextProgress = PROGRESS_STEP;
  /** Reading a redirect that is followed (or failed): the body is dropped. */
  private discarding = false;
  private failure: unknown;
  private done = false;

  constructor(
    private readonly max: number,
    private readonly ctx: ToolContext,
    private readonly abortState: Abort,
    private readonly checkRedirect: RedirectCheck | null,
    private readonly headersSeen: ((status: number) => void) | null,
    private readonly resolve: (r: Answer) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  /** Abort the request (once); not handed to a connection yet: onConnect aborts it. */
  abort(reason: Error): void {
    if (this.aborted || this.abortRequest === undefined) return;
    this.aborted = true;
    this.abortRequest(reason);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortRequest = abort;
    this.aborted = false; // a request retried on another connection gets a new abort
    if (this.abortState.reason) this.abort(this.abortState.reason);
  }

  onHeaders(status: number, raw: Buffer[], _resume: () => void, _statusText: string): boolean {
    if (status < 200) return true; // 1xx: the real answer follows
    this.status = status;
    // Lower-case names, repeated ones joined with ", " (in the order first seen). A "__proto__" header is
    // dropped (it cannot be a plain property); names Object.prototype has are the response's own.
    const flat: Record<string, string> = {};
    let locations = 0;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toString('latin1').toLowerCase();
      if (name === '__proto__') continue;
      const value = raw[i + 1]!.toString('latin1');
      if (name === 'location') locations++;
      flat[name] = Object.hasOwn(flat, name) ? `${flat[name]}, ${value}` : value;
    }
    this.headers = flat;
    this.headersSeen?.(status);
    // One Location header only: several are no redirect to follow.
    if (this.checkRedirect !== null && locations === 1) {
      try {
        this.discarding = this.checkRedirect(status, flat.location!);
      } catch (err) {
        this.failure = err;
        this.discarding = true;
      }
    }
    const length = flat['content-length'];
    if (length !== undefined) this.total = Number(length);
    if (this.discarding && this.total > DISCARD_LIMIT) this.finish(true);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.done) return true;
    this.received += chunk.length;
    if (this.discarding) {
      if (this.received > DISCARD_LIMIT) this.finish(true);
      return true;
    }
    const room = this.max - this.kept;
    if (chunk.length > room) {
      this.keep(chunk.subarray(0, room));
      this.finish(true);
      return true;
    }
    this.keep(chunk);
    if (this.received >= this.nextProgress) this.progress();
    return true;
  }

  onComplete(_trailers: string[] | null): void {
    this.finish(false);
  }

  onError(err: Error): void {
    if (this.done) return;
    this.done = true;
    if (this.abortState.current === this) this.abortState.current = undefined;
    this.reject(err);
  }

  /** Add to the body: the first chunk as it is (most bodies are one), later ones copied into one buffer sized by Content-Length when given. */
  private keep(chunk: Buffer): void {
    if (this.kept === 0 && this.first === undefined) {
      this.first = chunk;
      this.kept = chunk.length;
      return;
    }
    const needed = this.kept + chunk.length;
    if (this.buffer === undefined || this.buffer.length < needed) {
      const hinted = this.total >= needed ? this.total : Math.max(needed * 2, MIN_BUFFER);
      const grown = Buffer.allocUnsafe(Math.min(hinted, this.max));
      if (this.buffer !== undefined) this.buffer.copy(grown, 0, 0, this.kept);
      else this.first!.copy(grown, 0);
      this.buffer = grown;
      this.first = undefined;
    }
    chunk.copy(this.buffer, this.kept);
    this.kept = needed;
  }

  private progress(): void {
    const received = this.received;
    const total = this.total;
    this.nextProgress = received + PROGRESS_STEP;
    const known = Number.isFinite(total);
    this.ctx.emit('progress', {
      pct: known && total > 0 ? Math.min(100, Math.floor((received / total) * 100)) : 0,
      message: `received ${received} bytes${known ? ` of ${total}` : ''}`,
      bytes_received: received,
      bytes_total: known ? total : null,
    });
  }

  /** The answer is complete (or cut): resolve, and when `cut`, close the connection (the rest is not read). */
  private finish(cut: boolean): void {
    if (this.done) return;
    this.done = true;
    if (this.abortState.current === this) this.abortState.current = undefined;
    if (cut) this.abort(CUT);
    if (this.failure !== undefined) return this.reject(this.failure);
    const bytes = this.buffer !== undefined ? this.buffer.subarray(0, this.kept) : (this.first ?? EMPTY);
    this.resolve({ status: this.status, headers: this.headers, bytes, truncated: cut && !this.discarding });
  }
}

const EMPTY = Buffer.alloc(0);
/** The reason a connection is closed after the part of a body that is kept (nobody sees it). */
const CUT = new Error('response body cut');

/**
 * Send one request through `dispatcher` and read its answer. `abortState.current` is this exchange while
 * it runs.
 */
export function exchangeOnce(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  max: number,
  ctx: ToolContext,
  abortState: Abort,
  checkRedirect: RedirectCheck | null,
  headersSeen: ((status: number) => void) | null,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    if (abortState.reason) return reject(abortState.reason); // stopped between two hops: send nothing more
    const reader = new ResponseReader(max, ctx, abortState, checkRedirect, headersSeen, resolve, reject);
    abortState.current = reader;
    dispatcher.dispatch(options, reader);
  });
}
