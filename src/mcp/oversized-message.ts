/**
 * A message from an MCP server over `mcp.max_message_bytes` is not kept (nor
 * parsed), but the call it answers must still fail, at once and saying why,
 * rather than wait out its timeout. This finds which call that is: a byte
 * scan of the message as it streams by, picking out its top-level `"id"` and
 * whether it is a response (`"result"`/`"error"`, no `"method"`). The TS SDK
 * writes `id` last and the Python SDK first, so the scan runs to the end of
 * the message when it must; it keeps only a few bytes whatever the size.
 * The answer put in the message's place is a JSON-RPC error for that id.
 */
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

/** The error code of the answer put in place of an oversized message (implementation-defined range). */
export const MESSAGE_TOO_LARGE = -32090;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Longest key or id value looked at (a longer one is not a JSON-RPC id). */
const MAX_TOKEN = 256;

export class JsonRpcIdScan {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** At depth 1: the next string is a key. */
  private expectKey = false;
  /** The key being read (at depth 1), or null. */
  private key: number[] | null = null;
  private lastKey = '';
  /** The raw bytes of the top-level "id" value being read, or null. */
  private value: number[] | null = null;
  private idText: string | undefined;
  private hasMethod = false;
  private hasOutcome = false;
  private notJsonObject = false;

  /** Look at the next bytes of the message. */
  feed(bytes: Uint8Array): void {
    if (this.notJsonObject) return;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === BACKSLASH) this.escaped = true;
        else if (b === QUOTE) {
          this.inString = false;
          if (this.key) this.endKey();
        }
        if (this.key && this.inString) this.keep(this.key, b);
        if (this.value) this.keep(this.value, b);
        continue;
      }
      if (this.depth === 0) {
        if (b === 0x7b) {
          this.depth = 1;
          this.expectKey = true;
        } else if (b > 0x20) this.notJsonObject = true;
        if (this.notJsonObject) return;
        continue;
      }
      if (b === QUOTE) {
        this.inString = true;
        if (this.depth === 1 && this.expectKey) this.key = [];
        if (this.value) this.keep(this.value, b);
      } else if (b === 0x7b || b === 0x5b) {
        this.depth++;
        if (this.value) this.value = null; // an object or array is not an id
      } else if (b === 0x7d || b === 0x5d) {
        if (this.depth === 1) this.endValue();
        this.depth--;
      } else if (this.depth === 1 && b === 0x3a) {
        this.expectKey = false;
        if (this.lastKey === 'id') this.value = [];
      } else if (this.depth === 1 && b === 0x2c) {
        this.endValue();
        this.expectKey = true;
      } else if (this.value && b > 0x20) this.keep(this.value, b);
    }
  }

  /** The id of the response this is, once known; undefined for a request, a notification or no id. */
  get responseId(): RequestId | undefined {
    if (this.hasMethod || !this.hasOutcome || this.idText === undefined) return undefined;
    try {
      const id = JSON.parse(this.idText) as unknown;
      return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether the id is certain before the end: a response whose id came (the Python SDK's order). */
  get settled(): boolean {
    return this.idText !== undefined && this.hasOutcome && !this.hasMethod;
  }

  private keep(into: number[], b: number): void {
    if (into.length < MAX_TOKEN) into.push(b);
  }

  private endKey(): void {
    this.lastKey = this.key!.length < MAX_TOKEN ? Buffer.from(this.key!).toString('latin1') : '';
    this.key = null;
    if (this.lastKey === 'method') this.hasMethod = true;
    else if (this.lastKey === 'result' || this.lastKey === 'error') this.hasOutcome = true;
  }

  private endValue(): void {
    if (this.value && this.value.length > 0 && this.value.length < MAX_TOKEN)
      this.idText = Buffer.from(this.value).toString('utf8');
    this.value = null;
  }
}

/** What the gateway reads in place of a response too large to keep: an error for the same request. */
export function tooLargeAnswer(
  id: RequestId,
  bytes: number | undefined,
  maxBytes: number,
  server: string,
): JSONRPCMessage {
  const size = bytes === undefined ? `more than ${maxBytes} bytes` : `${bytes} bytes`;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: MESSAGE_TOO_LARGE,
      message:
        `MCP server "${server}" answered with a message of ${size}, over mcp.max_message_bytes (${maxBytes}); ` +
        'the answer was dropped: ask the tool for less (a smaller range, a filter, a page) or raise mcp.max_message_bytes',
    },
  };
}
