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
    return (this.text ??= Buffer.from(this.utf8!.buffer, this.utf8!.byteOffset, this.utf8!.byteLength).toString(
      'utf8',
    ));
  }

  /** Its size in UTF-8 bytes. */
  get byteLength(): number {
    return this.utf8 !== undefined ? this.utf8.byteLength : Buffer.byteLength(this.text!);
  }
}

/**
 * Make `holder[key]` the value of `source`'s JSON, parsed at its first read (a plain data property from then on).
 *
 * Every holder gets the same getter and setter for a given `key`, and keeps its text under a symbol of that key
 * (not enumerable: JSON.stringify, Object.keys and spreading never see it). Why not closures over the holder:
 * V8 gives an object whose accessor is a new function a new hidden class of its own, made in the old
 * generation and let go only by a full collection; until then it held that result, its text and what they
 * reach, which every young-generation collection copied and then promoted (measured on list_dir through the
 * file tools worker, 4 s of load: 24 MB promoted and 6 full collections with a closure per call, 0.8 MB and
 * none with the shared accessor).
 *
 * @example
 * const result = { success: true, data: null };
 * parseOnRead(result, 'data', new JsonText('{"a":1}'));
 * JSON.stringify(result); // '{"success":true,"data":{"a":1}}'
 */
export function parseOnRead(holder: object, key: string, source: JsonText): void {
  const lazy = lazyProperties.get(key) ?? lazyProperty(key);
  Object.defineProperty(holder, lazy.source, { value: source, writable: true, enumerable: false, configurable: true });
  // Redefining an existing property keeps its place: the holder serialises with its keys in the same order.
  Object.defineProperty(holder, key, lazy.accessor);
}

/** The shared accessor of a lazily parsed property, and the symbol its holders keep their text under. */
interface LazyProperty {
  accessor: PropertyDescriptor;
  source: symbol;
}

const lazyProperties = new Map<string, LazyProperty>();

function lazyProperty(key: string): LazyProperty {
  const source = Symbol(`a2e.jsonText(${key})`);
  const settle = (holder: Record<symbol, unknown>, value: unknown) => {
    Object.defineProperty(holder, key, { value, writable: true, enumerable: true, configurable: true });
    // The text is not needed any more: let it go with the first read.
    holder[source] = undefined;
  };
  const lazy: LazyProperty = {
    source,
    accessor: {
      enumerable: true,
      configurable: true,
      get(this: Record<symbol, JsonText>) {
        const value: unknown = JSON.parse(this[source]!.json);
        settle(this, value);
        return value;
      },
      set(this: Record<symbol, unknown>, value: unknown) {
        settle(this, value);
      },
    },
  };
  lazyProperties.set(key, lazy);
  return lazy;
}
