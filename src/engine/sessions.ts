/**
 * Sessions opened by a handshake. A session records which capabilities the
 * agent negotiated and who it authenticated as; every door (REST, the A2E
 * transport) resolves `session_id` through here.
 */
import { randomBytes } from 'node:crypto';
import {
  A2E_CAPABILITIES,
  PROTOCOL_VERSION,
  newId,
  nowTs,
  type HandshakeRequest,
  type HandshakeResponse,
} from '../protocol/index.js';
import type { Admitted } from './admission.js';
import { GatewayError } from './errors.js';

export interface Session {
  readonly id: string;
  readonly agentId: string;
  /** Capabilities negotiated in the handshake. */
  readonly capabilities: ReadonlySet<string>;
  /** Authenticated principal (token name), or null. */
  readonly principal: string | null;
  /** The credential it was opened with (Principal.credential), when the door knows it: a reload that revokes it ends the session. */
  readonly credential?: string;
  readonly createdAt: number;
  /** Epoch ms of the last use; the session expires `ttlS` after it. */
  lastSeen: number;
  /** Whose quota the session counts against: the principal, else the client address (see `quotaKey`). */
  readonly owner?: string;
}

/** Storage of sessions; in memory here, swappable for a shared store. */
export interface SessionStore {
  get(id: string): Session | undefined;
  put(session: Session): void;
  delete(id: string): void;
  /** Every session (for expiry sweeps). */
  values(): Iterable<Session>;
}

export class MemorySessionStore implements SessionStore {
  private readonly map = new Map<string, Session>();
  get = (id: string) => this.map.get(id);
  put = (s: Session) => void this.map.set(s.id, s);
  delete = (id: string) => void this.map.delete(id);
  values = () => this.map.values();
}

/**
 * Sessions kept in a store every instance shares (store.kind redis): a
 * handshake on one instance, calls on another. Expiry, the owner quota and
 * the count of live sessions are the store's to keep, atomically.
 */
export interface SharedSessionStore {
  /**
   * Store a new session: at its owner's `maxPerOwner` quota the owner's least
   * recently used session is closed first; false (nothing stored) when the
   * store holds `maxSessions` live sessions already.
   */
  open(session: Session): Promise<boolean>;
  /** The live session (its idle timer refreshed), or undefined when unknown or expired. */
  get(id: string): Promise<Session | undefined>;
  close(id: string): Promise<void>;
  /** Whether a call of `principal` in `sessionId` ("" for none) needs the store at all (a session, or a rate limit to take). */
  needed(principal: string | null, sessionId: string): boolean;
  /**
   * The session lookup of one call together with its shared admission (the
   * token's rate limit, the session's running calls for max_parallel), in one
   * round trip: undefined when the session is unknown, expired or another
   * principal's (then nothing was taken).
   */
  admitCall(
    principal: string | null,
    sessionId: string,
  ): Promise<{ session: Session | undefined; admitted: Admitted } | undefined>;
  /**
   * When the store last lost its data (a restart without persistence), epoch ms, if it did recently enough
   * that a session missing now may have been lost with it rather than have expired.
   */
  lostAt?(): number | undefined;
}

/** Capabilities this gateway serves. */
export const SERVED_CAPABILITIES: ReadonlySet<string> = new Set(['tools']);

export interface SessionManagerOptions {
  /** Idle time after which a session expires, seconds. */
  ttlS: number;
  /** Concurrent calls per session (0 = no limit); announced in the handshake. */
  maxParallel: number;
  /** Live sessions at most (0 or unset = no limit): a handshake beyond it is refused, so a flood cannot exhaust memory. */
  maxSessions?: number;
  /**
   * Live sessions per owner (a principal, or a client address for anonymous
   * callers; 0 or unset = no limit). An owner at its quota loses its own
   * least recently used session to the new one: never someone else's.
   */
  maxPerOwner?: number;
  store?: SessionStore;
  /** Keep sessions in this shared store instead (store.kind redis); `store` is then unused. */
  shared?: SharedSessionStore;
}

/**
 * The key a caller's sessions are counted under: its principal when it
 * authenticated, else its client address (anonymous callers on one address
 * share a quota; other addresses are not affected by them).
 */
export function quotaKey(principal: string | null, address: string | undefined): string {
  return principal !== null ? `principal:${principal}` : `address:${address ?? 'unknown'}`;
}

export class SessionManager {
  private readonly store: SessionStore;
  /** Ids of the live sessions per owner (this manager's own bookkeeping of what it put in the store). */
  private readonly byOwner = new Map<string, Set<string>>();
  private live = 0;
  constructor(private readonly options: SessionManagerOptions) {
    this.store = options.store ?? new MemorySessionStore();
  }

  get maxParallel(): number {
    return this.options.maxParallel;
  }

  /** The shared store sessions live in (store.kind redis), else undefined: then every method here is synchronous. */
  get shared(): SharedSessionStore | undefined {
    return this.options.shared;
  }

  /** handshake() for either store: synchronous in memory, one round trip to a shared store. */
  open(
    req: HandshakeRequest,
    principal: string | null,
    owner: string = quotaKey(principal, undefined),
    credential?: string,
  ): HandshakeResponse | Promise<HandshakeResponse> {
    const shared = this.options.shared;
    if (!shared) return this.handshake(req, principal, owner, credential);
    const { session, response } = this.newSession(req, principal, owner, credential);
    return shared.open(session).then((stored) => {
      if (!stored) throw this.full();
      return response;
    });
  }

  /** get() for either store. */
  find(id: string): Session | undefined | Promise<Session | undefined> {
    return this.options.shared ? this.options.shared.get(id) : this.get(id);
  }

  /** close() for either store. */
  end(id: string): void | Promise<void> {
    return this.options.shared ? this.options.shared.close(id) : this.close(id);
  }

  /**
   * Answer a handshake for an already-authenticated `principal`. Accepts only
   * capabilities that were asked for and that the gateway serves; names
   * outside the A2E set are never echoed back.
   */
  handshake(
    req: HandshakeRequest,
    principal: string | null,
    owner: string = quotaKey(principal, undefined),
    credential?: string,
  ): HandshakeResponse {
    this.makeRoom(owner);
    const { session, response } = this.newSession(req, principal, owner, credential);
    this.store.put(session);
    this.track(session);
    return response;
  }

  private newSession(
    req: HandshakeRequest,
    principal: string | null,
    owner: string,
    credential?: string,
  ): { session: Session; response: HandshakeResponse } {
    const asked = new Set(req.agent_caps.filter((c) => (A2E_CAPABILITIES as readonly string[]).includes(c)));
    const accepted = [...asked].map((capability) => ({
      capability,
      enabled: SERVED_CAPABILITIES.has(capability),
      metadata: {},
    }));
    const session: Session = {
      id: randomBytes(16).toString('hex'),
      agentId: req.agent_id,
      capabilities: new Set(accepted.filter((c) => c.enabled).map((c) => c.capability)),
      principal,
      createdAt: Date.now(),
      lastSeen: Date.now(),
      owner,
      ...(credential !== undefined && { credential }),
    };
    return {
      session,
      response: answer(req, {
        session_id: session.id,
        accepted_caps: accepted,
        max_parallel: this.options.maxParallel,
        ok: true,
      }),
    };
  }

  private full(): GatewayError {
    const max = this.options.maxSessions ?? 0;
    return new GatewayError(
      'unavailable',
      `the gateway has its maximum of ${max} open sessions (sessions.max_sessions); retry later`,
      {
        retryable: true,
        detail: { retry_after_s: 1 },
      },
    );
  }

  /** A refused handshake (e.g. bad token). */
  refuse(req: HandshakeRequest, reason: string): HandshakeResponse {
    return answer(req, { session_id: '', accepted_caps: [], max_parallel: 0, ok: false, reason });
  }

  /** The live session with this id (refreshing its idle timer), or undefined when unknown or expired. */
  get(id: string): Session | undefined {
    const s = this.store.get(id);
    if (!s) return undefined;
    const now = Date.now();
    if (now - s.lastSeen > this.options.ttlS * 1000) {
      this.drop(s);
      return undefined;
    }
    s.lastSeen = now;
    return s;
  }

  /** Live sessions (expired ones not yet swept included). */
  get size(): number {
    return this.live;
  }

  /** Live sessions counted against `owner`. */
  countOf(owner: string): number {
    return this.byOwner.get(owner)?.size ?? 0;
  }

  close(id: string): void {
    const s = this.store.get(id);
    if (s) this.drop(s);
    else this.store.delete(id);
  }

  /** End every session `ended` picks (e.g. of tokens a config reload removed); returns how many ended. */
  closeWhere(ended: (session: Session) => boolean): number {
    let n = 0;
    for (const s of [...this.store.values()]) {
      if (!ended(s)) continue;
      this.drop(s);
      n++;
    }
    return n;
  }

  /** Drop expired sessions; call periodically. */
  sweep(): void {
    const limit = Date.now() - this.options.ttlS * 1000;
    for (const s of [...this.store.values()]) if (s.lastSeen < limit) this.drop(s);
  }

  /**
   * Room for one more session of `owner`: at its quota its own least
   * recently used session goes (another owner's are never touched); with
   * the gateway full, expired ones are swept, else the handshake is refused.
   */
  private makeRoom(owner: string): void {
    const perOwner = this.options.maxPerOwner ?? 0;
    if (perOwner > 0 && this.countOf(owner) >= perOwner) this.evictOldest(owner);
    const max = this.options.maxSessions ?? 0;
    if (max > 0 && this.live >= max) {
      this.sweep();
      if (this.live >= max) throw this.full();
    }
  }

  /** Close `owner`'s least recently used session; false when it has none. */
  private evictOldest(owner: string): boolean {
    let oldest: Session | undefined;
    for (const id of this.byOwner.get(owner) ?? []) {
      const s = this.store.get(id);
      if (s && (!oldest || s.lastSeen < oldest.lastSeen)) oldest = s;
    }
    if (!oldest) return false;
    this.drop(oldest);
    return true;
  }

  private track(s: Session): void {
    const key = s.owner ?? '';
    let ids = this.byOwner.get(key);
    if (!ids) this.byOwner.set(key, (ids = new Set()));
    ids.add(s.id);
    this.live++;
  }

  private drop(s: Session): void {
    this.store.delete(s.id);
    const key = s.owner ?? '';
    const ids = this.byOwner.get(key);
    if (ids?.delete(s.id)) {
      this.live--;
      if (ids.size === 0) this.byOwner.delete(key);
    }
  }
}

/** A handshake/resp to `req` with the given outcome. */
function answer(
  req: HandshakeRequest,
  outcome: Pick<HandshakeResponse, 'session_id' | 'accepted_caps' | 'max_parallel' | 'ok'> & { reason?: string },
): HandshakeResponse {
  return {
    type: 'handshake/resp',
    id: newId(),
    version: PROTOCOL_VERSION,
    ts: nowTs(),
    req_id: req.id,
    ...outcome,
    reason: outcome.reason ?? '',
  };
}
