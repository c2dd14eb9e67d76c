/**
 * Memory held for callers, counted in bytes. A `ByteBudget` is one shared
 * total (e.g. the events of every running call); `approxJsonBytes` is how
 * a value is counted: the length of its JSON text, estimated without
 * serialising it.
 */

export class ByteBudget {
  private held = 0;
  constructor(
    /** Bytes allowed in total. */
    readonly limit: number,
  ) {}

  /** Bytes held now. */
  get used(): number {
    return this.held;
  }

  /** More is held than the limit allows. */
  get over(): boolean {
    return this.held > this.limit;
  }

  add(bytes: number): void {
    this.held += bytes;
  }

  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

const MAX_VALUES_COUNTED = 100_000;

/**
 * About how many characters `JSON.stringify(value)` would produce: strings
 * by length (plus quotes), numbers and literals at a fixed cost, containers
 * by their members. Iterative, so hostile nesting cannot overflow the stack;
 * cheap enough for every event of a streaming call. Stops after
 * `MAX_VALUES_COUNTED` values (a cyclic value would never end).
 */
export function approxJsonBytes(value: unknown): number {
  let total = 0;
  let counted = 0;
  const stack: unknown[] = [value];
  while (stack.length && ++counted <= MAX_VALUES_COUNTED) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length + 2;
    else if (v === null || typeof v !== 'object') total += 8;
    else if (Array.isArray(v)) {
      total += 2 + v.length;
      for (const item of v) stack.push(item);
    } else {
      total += 2;
      for (const key in v) {
        total += key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return total;
}
