import type { ToolDefinition } from '../protocol/index.js';

/** Who is calling: what the edges know about the client, handed to policy and audit. */
export interface Caller {
  /** Session from the handshake ("" when sessions are not used). */
  sessionId: string;
  /** Name of the authenticated principal (e.g. the token's name), or null. */
  principal: string | null;
  /** The credential it authenticated with (Principal.credential), when the door knows it: calls are bound to it. */
  credential?: string;
  /** Capabilities the caller's session negotiated; undefined when no session is used. */
  capabilities?: ReadonlySet<string>;
  /** The door the call came through, for the audit record (e.g. "a2a") when the door does not pass it to `start`; "rest" when unset. */
  door?: string;
}

/**
 * `hidden`: refuse as if the tool did not exist (unknown_tool, same message),
 * so a caller cannot tell a hidden tool from a missing one (`policy.hide_denied`).
 */
export type PolicyDecision = { allow: true } | { allow: false; reason: string; hidden?: boolean };

/**
 * Decides whether `caller` may see and call `tool`. The same function guards
 * listing, search and calling, so a tool hidden from a caller can never be called by it.
 */
export type Policy = (caller: Caller, tool: ToolDefinition) => PolicyDecision;

export const allowAll: Policy = () => ({ allow: true });

export const ANONYMOUS: Caller = Object.freeze({ sessionId: '', principal: null });
