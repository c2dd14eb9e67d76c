/**
 * The shape of a call id: what `newId()` hands out (a lower-case v4 UUID).
 * Doors check an id from a request against it before asking a store, so no
 * store key is ever built from a caller's text (on Redis `call:<id>:events`
 * is another key's name), and a malformed id is answered like an unknown one.
 */
const CALL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function isCallId(id: string): boolean {
  return id.length === 36 && CALL_ID.test(id);
}
