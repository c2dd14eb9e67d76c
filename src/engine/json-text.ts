/**
 * A result's data handed to the engine as JSON text: made by `JSON.stringify` in another of the gateway's own
 * processes (the file tools worker, which sends its answers as JSON anyway), or written directly by a native
 * tool whose answer is cheaper to write as text (list_dir: tools/fs/listing-json.ts). The engine answers a JSON door
 * with the text as it is and parses it only when something reads the value (`ToolResult.data`), so data that
 * crossed a process boundary is not parsed and serialised again on its way out. Not for plugins: the text is
 * trusted to be JSON.
 *
 * Given as UTF-8 bytes (as read from the worker's pipe), it stays bytes on its way to the socket: decoded to a
 * string only if something needs the text (measured on list_dir: the decode, the response's string and its
 * two flattenings were a third of what the gateway allocated per call).
 *
 * @example
 * return new ToolOutput({ data: new JsonText(answer.json) }); // answer.json: JSON.stringify of the data, elsewhere
 */
export class JsonText {
  private text: string | undefined;
  /** The UTF-8 bytes of the text, when it was given as bytes. */
  readonly utf8: Uint8Array | undefined;

  constructor(json: string | Uint8Array) {
    if (typeof json === 'string') this.text = json;
    else this.utf8 = json;
  }

  /** The JSON text (decoded once, on first use, when given as bytes). */
  get json(): string {
    return (this.text ??= Buffer.from(this.utf8!.buffer, this.utf8!.byteOffset, this.utf8!.byteLength).toString('utf8'));
  }

  /** Its size in UTF-8 bytes. */
  get byteLength(): number {
    return this.utf8 !== undefined ? this.utf8.byteLength : Buffer.byteLength(this.text!);
  }
}

/** Make `holder[key]` the value of `source`'s JSON, parsed at its first read (a plain data property from then on). */
export function parseOnRead(holder: object, key: string, source: JsonText): void {
  const settle = (value: unknown) => Object.defineProperty(holder, key, { value, writable: true, enumerable: true, configurable: true });
  // Redefining an existing property keeps its place: the holder serialises with its keys in the same order.
  Object.defineProperty(holder, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value: unknown = JSON.parse(source.json);
      settle(value);
      return value;
    },
    set: settle,
  });
}
