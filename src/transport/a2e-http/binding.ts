/**
 * Who an A2E transport session belongs to. A session id is never a
 * credential by itself: the session is bound to the principal that opened it
 * (its bearer token at POST /session) or, when it was opened without one, to
 * the first token its handshake authenticates; after that every request on it
 * must present that same principal, and nothing rebinds it.
 */
import { createHash } from 'node:crypto';
import { quotaKey } from '../../engine/index.js';

/**
 * Who sends a request: the principal of its bearer token (checked by the
 * gateway's guard), or null when it presented none, and its client address.
 */
export interface Presenter {
  principal: string | null;
  address: string;
}

/** Why a request may not use a session; the adapter maps it to an HTTP status. */
export type BindingRefusal = { kind: 'unauthorized' | 'foreign_session'; message: string };

/** What a shared store keeps of a binding. */
export interface SavedBinding {
  principal: string | null;
  boundBy: 'bearer' | 'handshake' | undefined;
  quotaKey: string;
  address: string;
  createdAt: number;
  handshook: boolean;
}

export class SessionBinding {
  /** The principal the session belongs to; null while unbound (anonymous). */
  principal: string | null;
  /** How it was bound: by the bearer token at POST /session, or by its handshake's auth_token. */
  boundBy: 'bearer' | 'handshake' | undefined;
  /** Whose session quota it counts against (fixed at creation). */
  readonly quotaKey: string;
  readonly createdAt = Date.now();
  /** A handshake succeeded on the session at least once (the handshake deadline is met). */
  handshook = false;
  /** What logs show instead of the session id (which must never be logged): a short digest of it. */
  readonly ref: string;

  constructor(
    sessionId: string,
    /** The principal of the bearer token that opened the session, or null when none was presented. */
    opener: string | null,
    /** The client address that opened it. */
    readonly address: string,
  ) {
    this.principal = opener;
    this.boundBy = opener === null ? undefined : 'bearer';
    this.quotaKey = quotaKey(opener, address);
    this.ref = createHash('sha256').update(sessionId).digest('hex').slice(0, 12);
  }

  /** A binding as a shared store recorded it (its quota key is the one fixed at creation). */
  static restore(sessionId: string, saved: SavedBinding): SessionBinding {
    const b = new SessionBinding(sessionId, null, saved.address);
    Object.assign(b, { quotaKey: saved.quotaKey, createdAt: saved.createdAt });
    b.principal = saved.principal;
    b.boundBy = saved.boundBy;
    b.handshook = saved.handshook;
    return b;
  }

  /**
   * May a request presenting `presented` (its bearer token's principal, or
   * null for none) use this session? Undefined when it may.
   */
  check(presented: string | null): BindingRefusal | undefined {
    if (presented === this.principal) return undefined;
    if (presented === null) {
      // A session bound by a handshake (an embedding without bearer tokens) is used by its id, as A2E clients do.
      if (this.boundBy === 'handshake') return undefined;
      return {
        kind: 'unauthorized',
        message: 'this session belongs to a token; send that token as Authorization: Bearer <token> with every request',
      };
    }
    return {
      kind: 'foreign_session',
      message:
        this.principal === null
          ? 'this session was opened without a token and cannot be used with one; open your own with POST /session and your token'
          : 'this session belongs to another token; open your own with POST /session and your token',
    };
  }

  /**
   * The principal a handshake on this session acts as, given the principal
   * its auth_token authenticated (null: it sent none). A reason string when
   * the handshake must be refused because it names someone else.
   */
  handshakePrincipal(authenticated: string | null): { principal: string | null } | { reason: string } {
    if (authenticated === null || authenticated === this.principal) return { principal: this.principal };
    if (this.principal !== null) {
      return {
        reason: 'auth_token is another token than the one this session belongs to; open a new session for that token',
      };
    }
    return { principal: authenticated };
  }

  /** Whose quota a handshake session opened on this transport session as `principal` counts against. */
  handshakeOwner(principal: string | null): string {
    return quotaKey(principal, this.address);
  }

  /** A handshake succeeded as `principal`: an unbound session now belongs to it. */
  handshakeDone(principal: string | null): void {
    this.handshook = true;
    if (this.principal === null && principal !== null) {
      this.principal = principal;
      this.boundBy = 'handshake';
    }
  }
}
