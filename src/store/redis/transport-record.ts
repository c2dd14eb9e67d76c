/** A transport session's hash in Redis, as read (keys and fields: transport-scripts.ts). */
import type { SavedBinding, SessionState } from '../../transport/a2e-http/index.js';

/** A session's hash, as read: its binding, and the session's own state. */
export interface SessionRecord extends SavedBinding {
  handshakeId: string;
  state: SessionState;
  version: number;
  /** Frames not yet written to a stream. */
  pending: number;
  /** Id of the next frame. */
  next: number;
  bytes: number;
  /** Nonce of the stream holding it ("" none). */
  holder: string;
}

export function parseRecord(flat: string[]): SessionRecord {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
  const b = f.b;
  return {
    principal: f.p ? f.p.slice(1) : null,
    boundBy: b === 'bearer' || b === 'handshake' ? b : undefined,
    quotaKey: f.q ?? '',
    address: f.a ?? '',
    createdAt: Number(f.c),
    handshook: f.h === '1',
    handshakeId: f.hs ?? '',
    state: (f.st ?? 'closed') as SessionState,
    version: Number(f.v ?? 0),
    pending: Number(f.n) - 1 - Number(f.w),
    next: Number(f.n ?? 0),
    bytes: Number(f.by ?? 0),
    holder: f.s ?? '',
  };
}
