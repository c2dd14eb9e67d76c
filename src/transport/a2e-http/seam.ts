/**
 * The seam between the transport's HTTP routes and where its sessions live:
 * this process's memory (A2eHttpTransport, the default) or a store shared by
 * every gateway instance (store.kind: redis, src/store/redis/transport-sessions.ts),
 * where a session opened on one instance takes messages on another and
 * streams from a third. Methods answer at once in memory; a shared store
 * answers asynchronously and may fail with the retryable `unavailable` error.
 */
import type { A2eHttpTransportOptions } from './options.js';
import type { Presenter } from './binding.js';
import type { FrameSink } from './session.js';

export interface A2eTransport {
  /** POST /session: a new session id, owned by `by`. Refusals are TransportRefusals. */
  createSession(by?: Presenter): string | Promise<string>;
  /** The session may be used by `by` (its bearer principal; null: none); a TransportRefusal when not. */
  check(id: string | undefined, by?: string | null): void | Promise<void>;
  /** POST /send: accept one message; its answers travel on the stream. */
  send(id: string | undefined, body: Uint8Array, by?: string | null): void | Promise<void>;
  /** GET /stream: attach `sink` as the session's stream, resuming after `lastEventId` when given. */
  attach(id: string | undefined, sink: FrameSink, lastEventId?: string, by?: string | null): void | Promise<void>;
  /** A stream is attached to the session now (for tests and diagnostics). */
  streamAttached(id: string): boolean | Promise<boolean>;
  /**
   * Close every session whose principal `revoked` picks (a config reload removed or changed its credential), with
   * its calls; returns how many closed.
   */
  endWhere(revoked: (principal: string | null) => boolean): number | Promise<number>;
  /** Gateway shutdown. */
  close(): Promise<void>;
}

/** Builds the transport's sessions from what the gateway passes the transport. */
export type A2eTransportFactory = (options: A2eHttpTransportOptions) => A2eTransport;
