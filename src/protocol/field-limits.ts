/**
 * Longest strings accepted in the fields of incoming A2E messages. Fixed,
 * not configured: these fields are names and ids that the gateway keeps
 * (sessions, call resources) or echoes in every answer (`req_id` on each
 * event and response), so an unbounded one multiplies memory and output.
 * Arguments and tool output are bounded by `limits` and `server` instead.
 */
export const FIELD_LIMITS = Object.freeze({
  /** Message `id`, `session_id`, `correlation_id` (ids are UUIDs or similar; 36 characters in practice). */
  id: 256,
  /** Message `version` ("1.0"). */
  version: 32,
  /** `tool_name`, `agent_id`, `filter_kind`, a tag. */
  name: 256,
  /** `auth_token`. */
  token: 4096,
  /** `query` of a tool search. */
  query: 4096,
  /** Items of `agent_caps` and `filter_tags`. */
  listItems: 64,
});
