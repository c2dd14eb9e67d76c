/** The lease of an A2E transport call: its member's shape, and what it keeps to answer the call if its instance is lost. */
import type { Call } from '../../engine/index.js';

/** Prefix of the lease members of the transport's calls: "a2e:<session id>:<call id>". */
export const LEASE_PREFIX = 'a2e:';

/** The session of a transport call's lease member ("a2e:<session id>:<call id>"). */
export function sessionOf(member: string): string {
  return member.slice(LEASE_PREFIX.length, member.lastIndexOf(':'));
}

/** What the lease of a transport call keeps of it, to answer it if its instance is lost. */
export function callInfo(call: Call): string {
  return JSON.stringify({ r: call.requestId, t: call.toolName, c: call.createdAt });
}

/** The lease member of a call of a session. */
export function leaseOf(sid: string, call: Call): string {
  return `${LEASE_PREFIX}${sid}:${call.id}`;
}
