/**
 * Output shaping: the byte cap on tool results, and scrubbing of unexpected
 * error messages so host paths never reach a client.
 */

const encoder = new TextEncoder();

/** Cut a string to at most `maxBytes` of UTF-8 without splitting a character. */
export function cutUtf8(s: string, maxBytes: number): string {
  if (s.length <= maxBytes / 3) return s; // fast path: cannot exceed
  const bytes = encoder.encode(s);
  if (bytes.length <= maxBytes) return s;
  let end = Math.max(0, maxBytes);
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back off a continuation byte
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/**
 * Shrink a JSON value to roughly `maxBytes` of serialised JSON: strings are
 * cut, arrays and objects lose their tail once the budget is spent. Returns
 * the value unchanged when it already fits, the size of what is returned and
 * its JSON text (undefined for a value JSON leaves out, like a function), so a
 * caller need not serialise it again.
 */
export function truncateValue(
  value: unknown,
  maxBytes: number,
): { value: unknown; truncated: boolean; bytes: number; json: string | undefined } {
  const json = JSON.stringify(value) as string | undefined;
  const bytes = json === undefined ? 0 : Buffer.byteLength(json);
  if (bytes <= maxBytes) return { value, truncated: false, bytes, json };
  let budget = maxBytes;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const cut = cutUtf8(v, Math.max(0, budget - 2));
      budget -= Buffer.byteLength(cut) + 2;
      return cut;
    }
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      budget -= 2;
      for (const item of v) {
        if (budget <= 0) break;
        out.push(walk(item));
        budget -= 1;
      }
      return out;
    }
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      budget -= 2;
      for (const [k, item] of Object.entries(v)) {
        if (budget <= 0) break;
        budget -= Buffer.byteLength(k) + 4;
        out[k] = walk(item);
      }
      return out;
    }
    budget -= String(v).length;
    return v;
  };
  const cut = walk(value);
  const cutJson = JSON.stringify(cut);
  return { value: cut, truncated: true, bytes: Buffer.byteLength(cutJson), json: cutJson };
}

// An absolute path not preceded by a word character, ':' or '/' (so URLs survive).
const HOST_PATH = /(?<![\w:/.~-])\/(?:[^\s/'"`:,;()[\]{}]+\/)*[^\s/'"`:,;()[\]{}]*/g;

/** The message of an unexpected error, with absolute host paths replaced by "<path>". */
export function safeErrorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(HOST_PATH, (m) => (m === '/' ? m : '<path>'));
}
