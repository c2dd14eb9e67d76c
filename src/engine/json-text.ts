/**
 * A result's data handed to the engine as JSON text: made by `JSON.stringify` in another of the gateway's own
 * processes (the file tools worker, which sends its answers as JSON anyway), or written directly by a native
 * tool whose answer is cheaper to write as text (list_dir: tools/fs/listing-json.ts). The engine answers a JSON door
 * with the text as it is and parses it only when something reads the value (`ToolResult.data`), so data that
 * crossed a process boundary is not parsed and serialised again on its way out. Not for plugins: the text is
 * trusted to be JSON.
 *
 * @example
 * return new ToolOutput({ data: new JsonText(answer.json) }); // answer.json: JSON.stringify of the data, elsewhere
 */
export class JsonText {
  constructor(readonly json: string) {}
}

/** Make `holder[key]` the value of `json`, parsed at its first read (a plain data property from then on). */
export function parseOnRead(holder: object, key: string, json: string): void {
  const settle = (value: unknown) => Object.defineProperty(holder, key, { value, writable: true, enumerable: true, configurable: true });
  // Redefining an existing property keeps its place: the holder serialises with its keys in the same order.
  Object.defineProperty(holder, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value: unknown = JSON.parse(json);
      settle(value);
      return value;
    },
    set: settle,
  });
}
