/**
 * The QuickJS WebAssembly module, rewritten to record how low its stack pointer went (a high-water mark), so
 * that a reset zeroes the stack an evaluation used instead of all it could have reached (memory-reset.ts:
 * 1.25 MiB by default, most of a reset's cost for a small evaluation).
 *
 * The stack pointer of an Emscripten build is its first global, and code changes it only with `global.set`.
 * Each of those becomes a call to an added function that sets it and keeps the lowest value in an added,
 * exported global (`STACK_LOW_EXPORT`). A function that calls nothing may use a frame below the stack
 * pointer without moving it: `leafReach` bounds those frames (the largest constant any function subtracts
 * from the stack pointer). Anything this file does not know how to read (an opcode it does not decode, a
 * stack pointer that is not a mutable i32) leaves the module as it was: then resets zero the whole reach.
 */

/** The export holding the lowest stack pointer since it was last set (to the top, before an evaluation). */
export const STACK_LOW_EXPORT = 'a2e_stack_low';

export interface MarkedModule {
  readonly bytes: Uint8Array<ArrayBuffer>;
  /** How far below the lowest stack pointer a frame that does not move it can reach (bytes). */
  readonly leafReach: number;
}

class Reader {
  pos: number;
  constructor(
    readonly b: Uint8Array,
    pos = 0,
  ) {
    this.pos = pos;
  }
  byte(): number {
    if (this.pos >= this.b.length) throw new Error('truncated');
    return this.b[this.pos++]!;
  }
  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = this.byte();
      result += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) return result;
      shift += 7;
      if (shift > 35) throw new Error('bad LEB128');
    }
  }
  /** A signed LEB128 of up to 32 bits. */
  s32(): number {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = this.byte();
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80 && shift < 35);
    return byte & 0x40 ? result - 2 ** shift : result;
  }
  /** A signed LEB128 (of up to 64 bits), as a number when it fits. */
  s64(): number {
    let result = 0n;
    let shift = 0n;
    let byte: number;
    do {
      byte = this.byte();
      result |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
    } while (byte & 0x80 && shift < 70n);
    if (byte & 0x40) result -= 1n << shift;
    return Number(result);
  }
  skip(n: number): void {
    this.pos += n;
  }
}

function leb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value) byte |= 0x80;
    out.push(byte);
  } while (value);
  return out;
}

type Bytes = Uint8Array | number[];

const concat = (parts: Bytes[]): Uint8Array<ArrayBuffer> =>
  Buffer.concat(parts.map((p) => (p instanceof Uint8Array ? p : Uint8Array.from(p))));

/** A vector's items after its count. */
const items = (body: Uint8Array) => {
  const r = new Reader(body);
  const count = r.u32();
  return { count, rest: body.subarray(r.pos) };
};

/** Opcodes with no immediate: the numeric instructions, and drop, select, return, unreachable, nop, else, end. */
function noImmediate(op: number): boolean {
  return (
    (op >= 0x45 && op <= 0xc4) ||
    op === 0x1a ||
    op === 0x1b ||
    op === 0x0f ||
    op <= 0x01 ||
    op === 0x05 ||
    op === 0x0b ||
    op === 0xd1
  );
}

/**
 * Rewrite one function body's instructions: each `global.set sp` becomes `call track`. Records the largest
 * constant subtracted right after `global.get sp` (a frame's size). Throws on anything it cannot decode.
 */
function rewriteBody(body: Uint8Array, sp: number, track: number, frames: { max: number }): Uint8Array {
  const r = new Reader(body);
  const locals = r.u32();
  for (let i = 0; i < locals; i++) {
    r.u32();
    r.byte();
  }
  const out: Bytes[] = [];
  let from = 0;
  let afterSpGet = false; // the previous instruction was global.get sp
  let frameConst = -1; // ... then i32.const N: the frame size, if an i32.sub follows
  while (r.pos < body.length) {
    const start = r.pos;
    const op = r.byte();
    let spGet = false;
    let constant = -1;
    if (noImmediate(op)) {
      if (op === 0x6b && frameConst >= 0) frames.max = Math.max(frames.max, frameConst); // i32.sub
    } else if (op === 0x02 || op === 0x03 || op === 0x04) {
      const t = r.b[r.pos]!;
      if (
        t === 0x40 ||
        t === 0x7f ||
        t === 0x7e ||
        t === 0x7d ||
        t === 0x7c ||
        t === 0x7b ||
        t === 0x70 ||
        t === 0x6f
      ) {
        r.skip(1);
      } else r.s32();
    } else if (op === 0x0c || op === 0x0d || op === 0x10 || op === 0x20 || op === 0x21 || op === 0x22) r.u32();
    else if (op === 0x0e) {
      const n = r.u32();
      for (let i = 0; i <= n; i++) r.u32();
    } else if (op === 0x11) {
      r.u32();
      r.u32();
    } else if (op === 0x1c) {
      const n = r.u32();
      r.skip(n);
    } else if (op === 0x23) spGet = r.u32() === sp;
    else if (op === 0x24) {
      const index = r.u32();
      if (index === sp) {
        out.push(body.subarray(from, start), [0x10, ...leb(track)]);
        from = r.pos;
      }
    } else if (op === 0x25 || op === 0x26) r.u32();
    else if (op >= 0x28 && op <= 0x3e) {
      const align = r.u32();
      if (align & 0x40) throw new Error('multi-memory');
      r.u32();
    } else if (op === 0x3f || op === 0x40) r.byte();
    else if (op === 0x41) {
      const value = r.s32();
      if (afterSpGet && value >= 0) constant = value;
    } else if (op === 0x42) r.s64();
    else if (op === 0x43) r.skip(4);
    else if (op === 0x44) r.skip(8);
    else if (op === 0xd0) r.byte();
    else if (op === 0xd2) r.u32();
    else if (op === 0xfc) {
      const sub = r.u32();
      if (sub <= 7) {
        // saturating truncations
      } else if (sub === 8 || sub === 10 || sub === 12 || sub === 14) {
        r.u32();
        r.u32();
      } else if (sub === 9 || sub === 11 || sub === 13 || (sub >= 15 && sub <= 17)) r.u32();
      else throw new Error(`opcode 0xfc ${sub}`);
    } else throw new Error(`opcode ${op}`);
    afterSpGet = spGet;
    frameConst = constant;
  }
  out.push(body.subarray(from));
  return concat(out);
}

/** The module with its stack pointer tracked, or undefined when it cannot be (then it is used as it is). */
export function markStack(wasm: Uint8Array): MarkedModule | undefined {
  try {
    return mark(wasm);
  } catch {
    return undefined;
  }
}

function mark(wasm: Uint8Array): MarkedModule | undefined {
  const r = new Reader(wasm, 8);
  const sections: { id: number; body: Uint8Array }[] = [];
  while (r.pos < wasm.length) {
    const id = r.byte();
    const size = r.u32();
    sections.push({ id, body: wasm.subarray(r.pos, r.pos + size) });
    r.skip(size);
  }
  const find = (id: number) => sections.find((s) => s.id === id);
  const [types, imports, functions, globals, exports, code] = [1, 2, 3, 6, 7, 10].map(find);
  if (!types || !functions || !globals || !exports || !code) return undefined;

  // Imported functions and globals come first in their index spaces.
  let importedFunctions = 0;
  let importedGlobals = 0;
  if (imports) {
    const ir = new Reader(imports.body);
    for (let n = ir.u32(); n > 0; n--) {
      ir.skip(ir.u32());
      ir.skip(ir.u32());
      const kind = ir.byte();
      const limits = () => {
        if (ir.u32() & 1) ir.u32();
        ir.u32();
      };
      if (kind === 0) {
        ir.u32();
        importedFunctions++;
      } else if (kind === 1) {
        ir.byte();
        limits();
      } else if (kind === 2) limits();
      else if (kind === 3) {
        ir.skip(2);
        importedGlobals++;
      } else return undefined;
    }
  }
  // The stack pointer: the first defined global, a mutable i32.
  const gr = new Reader(globals.body);
  const globalCount = gr.u32();
  if (importedGlobals !== 0 || globalCount === 0 || gr.byte() !== 0x7f || gr.byte() !== 1) return undefined;
  const sp = 0;
  const low = importedGlobals + globalCount;

  // A type (i32) -> (): the added function's.
  const tr = new Reader(types.body);
  const typeCount = tr.u32();
  let trackType = -1;
  for (let i = 0; i < typeCount; i++) {
    if (tr.byte() !== 0x60) return undefined;
    const params = tr.u32();
    const p = [...tr.b.subarray(tr.pos, tr.pos + params)];
    tr.skip(params);
    const results = tr.u32();
    tr.skip(results);
    if (trackType < 0 && params === 1 && p[0] === 0x7f && results === 0) trackType = i;
  }
  const typeItems = items(types.body);
  const newTypes = trackType >= 0 ? [types.body] : [leb(typeCount + 1), typeItems.rest, [0x60, 1, 0x7f, 0]];
  if (trackType < 0) trackType = typeCount;

  const definedFunctions = items(functions.body).count;
  const track = importedFunctions + definedFunctions;

  const cr = new Reader(code.body);
  const bodies = cr.u32();
  if (bodies !== definedFunctions) return undefined;
  const frames = { max: 0 };
  const newCode: Bytes[] = [leb(bodies + 1)];
  for (let i = 0; i < bodies; i++) {
    const size = cr.u32();
    const body = rewriteBody(code.body.subarray(cr.pos, cr.pos + size), sp, track, frames);
    cr.skip(size);
    newCode.push(leb(body.length), body);
  }
  // track(v): sp = v; if (v < low, unsigned) low = v
  const trackBody = [
    0,
    0x20,
    0,
    0x24,
    ...leb(sp),
    0x20,
    0,
    0x23,
    ...leb(low),
    0x49,
    0x04,
    0x40,
    0x20,
    0,
    0x24,
    ...leb(low),
    0x0b,
    0x0b,
  ];
  newCode.push(leb(trackBody.length), trackBody);

  const newFunctions = [leb(definedFunctions + 1), items(functions.body).rest, leb(trackType)];
  // A mutable i32 initialised to -1 (the highest unsigned address): any stack pointer is lower.
  const newGlobals = [leb(globalCount + 1), items(globals.body).rest, [0x7f, 1, 0x41, 0x7f, 0x0b]];
  const exportItems = items(exports.body);
  const name = new TextEncoder().encode(STACK_LOW_EXPORT);
  const newExports = [leb(exportItems.count + 1), exportItems.rest, leb(name.length), name, [3, ...leb(low)]];

  const replaced = new Map<number, Bytes[]>([
    [1, newTypes],
    [3, newFunctions],
    [6, newGlobals],
    [7, newExports],
    [10, newCode],
  ]);
  const out: Bytes[] = [wasm.subarray(0, 8)];
  for (const s of sections) {
    const body = concat(replaced.get(s.id) ?? [s.body]);
    out.push([s.id, ...leb(body.length)], body);
  }
  return { bytes: concat(out), leafReach: frames.max };
}
