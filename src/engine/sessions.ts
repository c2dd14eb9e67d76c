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
import { GatewayError } from './errors.js';

export interface Session {
  readonly id: string;
  readonly agentId: string;
  /** Capabilities negotiated in the handshake. */
  readonly capabilities: ReadonlySet<string>;
  /** Authenticated principal (token name), or null. */
  readonly principal: string | null;
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

  /**
   * Answer a handshake for an already-authenticated `principal`. Accepts only
   * capabilities that were asked for and that the gateway serves; names
   * outside the A2E set are never echoed back.
   */
  handshake(req: HandshakeRequest, principal: string | null, owner: string = quotaKey(principal, undefined)): HandshakeResponse {
    this.makeRoom(owner);
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
    };
    this.store.put(session);
    this.track(session);
    return answer(req, { session_id: session.id, accepted_caps: accepted, max_parallel: this.options.maxParallel, ok: true });
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
      if (this.live >= max) {
        throw new GatewayError('unavailable', `the gateway has its maximum of ${max} open sessions (sessions.max_sessions); retry later`, {
          retryable: true,
          detail: { retry_after_s: 1 },
        });
      }
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
