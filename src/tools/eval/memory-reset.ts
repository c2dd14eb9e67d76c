/**
 * Puts a QuickJS WebAssembly instance's memory back to the bytes it had when the instance was new, so the
 * instance can serve the next evaluation instead of a fresh one (~5 ms to make, against well under 1 ms for
 * this reset) while the next evaluation still starts from the memory of an instance nobody used.
 *
 * The layout of an Emscripten build is fixed: static data (the allocator's state and the `sbrk` break among
 * it), then the stack, which grows down and is all zeros below what start-up touched, then the heap, which
 * grows up to the break. The break never goes down (nothing of the heap is given back), so an evaluation
 * wrote nothing above the break it leaves. A reset copies back the static data and the top of the stack,
 * zeroes what the evaluation could reach of the stack below that (QuickJS stops at its stack limit), and
 * zeroes the heap from the pristine break to the break now.
 *
 * The layout is found from the memory itself (`learn`): if this build does not look as expected, there is
 * no reset and every evaluation gets a fresh instance, as before.
 */

export interface PristineMemory {
  /** Bytes [0, dataEnd): static data, copied back. */
  readonly data: Uint8Array;
  /** Start of the stack's all-zero part (the stack's lowest address). */
  readonly stackLow: number;
  /** End of the stack's all-zero part: from here to the pristine break, copied back. */
  readonly stackTouched: number;
  /** Bytes [stackTouched, breakAtStart). */
  readonly top: Uint8Array;
  /** Address of the `sbrk` break in static data. */
  readonly breakAddress: number;
  readonly breakAtStart: number;
  /** Size of the memory when new: an evaluation that grew it leaves the instance unusable for a reset. */
  readonly byteLength: number;
}

/** The stack's all-zero part is megabytes; anything much smaller means this is not the layout we know. */
const MIN_STACK = 1024 * 1024;

/**
 * Learn the layout of a new instance's memory, or undefined when it is not the one described above. The
 * first time it reads the whole memory (tens of milliseconds: the untouched pages fault in); given what
 * an earlier instance of the same module looked like (`known`), it only checks that this one starts with
 * the same bytes (start-up is deterministic) and shares them.
 */
export function learn(memory: WebAssembly.Memory, known?: PristineMemory): PristineMemory | undefined {
  if (known) return sameStart(memory, known) ? known : learn(memory);
  const bytes = new Uint8Array(memory.buffer);
  // Scanned a word at a time (the layout's boundaries are word-aligned; a word is zero or not).
  const words = new Uint32Array(memory.buffer);
  // The last non-zero word is the allocator's top chunk header (prev_foot, head = size | flags): the
  // chunk ends at the break.
  let last = words.length;
  while (last > 0 && words[last - 1] === 0) last--;
  const headAddress = (last - 1) * 4;
  const chunk = headAddress - 4;
  const breakAtStart = chunk + (words[last - 1]! & ~7);
  if (chunk <= 0 || breakAtStart < headAddress + 4 || breakAtStart > bytes.length) return undefined;
  // The stack: the longest run of zero words below the heap.
  let runStart = 0;
  let bestStart = 0;
  let bestEnd = 0;
  const chunkWord = chunk / 4;
  for (let i = 0; i <= chunkWord; i++) {
    if (i < chunkWord && words[i] === 0) continue;
    if (i - runStart > bestEnd - bestStart) [bestStart, bestEnd] = [runStart, i];
    runStart = i + 1;
  }
  const [stackLow, stackTouched] = [bestStart * 4, bestEnd * 4];
  if (stackTouched - stackLow < MIN_STACK) return undefined;
  // The break is a word in static data holding exactly breakAtStart; it must be the only one.
  let breakAddress = -1;
  for (let i = 0; i < bestStart; i++) {
    if (words[i] !== breakAtStart) continue;
    if (breakAddress >= 0) return undefined;
    breakAddress = i * 4;
  }
  if (breakAddress < 0) return undefined;
  return {
    data: bytes.slice(0, stackLow),
    stackLow,
    stackTouched,
    top: bytes.slice(stackTouched, breakAtStart),
    breakAddress,
    breakAtStart,
    byteLength: bytes.length,
  };
}

function sameStart(memory: WebAssembly.Memory, known: PristineMemory): boolean {
  if (memory.buffer.byteLength !== known.byteLength) return false;
  const bytes = Buffer.from(memory.buffer);
  return (
    bytes.subarray(0, known.stackLow).equals(known.data) &&
    bytes.subarray(known.stackTouched, known.breakAtStart).equals(known.top)
  );
}

/**
 * Reset `memory` to `pristine`, or return false when it cannot be (grown, or a break that does not fit
 * the layout): then the instance must be thrown away. `stackReach` bounds how far below its touched top an
 * evaluation can have written on the stack (QuickJS's stack limit plus a margin for the C frames beyond it).
 */
export function reset(memory: WebAssembly.Memory, pristine: PristineMemory, stackReach: number): boolean {
  if (memory.buffer.byteLength !== pristine.byteLength) return false;
  const bytes = new Uint8Array(memory.buffer);
  const breakNow = new DataView(memory.buffer).getUint32(pristine.breakAddress, true);
  if (breakNow < pristine.breakAtStart || breakNow > bytes.length) return false;
  bytes.set(pristine.data, 0);
  bytes.fill(0, Math.max(pristine.stackLow, pristine.stackTouched - stackReach), pristine.stackTouched);
  bytes.set(pristine.top, pristine.stackTouched);
  bytes.fill(0, pristine.breakAtStart, breakNow);
  return true;
}
