/**
 * An eval instance sealed with its one runtime and context made (their limits, interrupt handler and console
 * included): after each evaluation its memory goes back to those bytes (memory-reset.ts `reset`, with the heap
 * up to the break as sealed), so the next evaluation starts in the runtime and context as they were made,
 * without paying to free one and make another (most of an evaluation's own cost: making a context builds
 * every built-in object). What lives outside the WebAssembly memory is put back too: the runtime's host
 * references (the console's functions; an evaluation that frees them makes the runtime drop theirs), and a
 * context's one value that must differ each time, its Math.random seed, is drawn anew.
 */
import { randomFillSync } from 'node:crypto';
import type { QuickJSRuntime } from 'quickjs-emscripten-core';
import { reset, type PristineMemory } from './memory-reset.js';

export interface Sealed {
  /** What `reset` puts the memory back to. */
  readonly memory: PristineMemory;
  /** After a reset: the runtime's host references as sealed, and a new Math.random seed. */
  restored(): void;
}

/** quickjs-emscripten's HostRefMap (ids of host values QuickJS holds), as this version lays it out. */
interface HostRefs {
  nextId: number;
  freelist: number[];
  groups: Map<number, Map<number, object>>;
}

/**
 * Seal `memory` as it is now, with `runtime` made in it after the instance was new (`pristine`); undefined
 * when it cannot be (its host references are not laid out as this file knows, or the break is off).
 */
export function seal(
  memory: WebAssembly.Memory,
  pristine: PristineMemory,
  reach: number,
  runtime: QuickJSRuntime,
  seedAddress: number,
): Sealed | undefined {
  const refs = (runtime as unknown as { hostRefs?: Partial<HostRefs> }).hostRefs;
  if (typeof refs?.nextId !== 'number' || !Array.isArray(refs.freelist) || !(refs.groups instanceof Map)) return;
  const hostRefs = refs as HostRefs;
  const made = madeBytes(memory, pristine, reach);
  if (!made) return undefined;
  const sealed: PristineMemory = {
    ...pristine,
    data: made.slice(0, pristine.stackLow),
    top: made.slice(pristine.stackTouched),
    breakAtStart: made.length,
  };
  const saved = { nextId: hostRefs.nextId, freelist: [...hostRefs.freelist], groups: copyOf(hostRefs.groups) };
  const view = new DataView(memory.buffer);
  const seeds = new SeedPool();
  return {
    memory: sealed,
    restored() {
      // Most evaluations leave the host references alone: copying them back is then skipped.
      if (!unchanged(hostRefs, saved)) {
        hostRefs.nextId = saved.nextId;
        hostRefs.freelist = [...saved.freelist];
        hostRefs.groups = copyOf(saved.groups);
      }
      view.setBigUint64(seedAddress, seeds.next() | 1n, true); // xorshift's state must not be zero
    },
  };
}

/**
 * Whether `now` holds what was `saved`: the same ids free in the same order, the same next id, and each
 * id the same host value (HostRefMap only adds, with a free id or the next one, and deletes, freeing its id).
 */
function unchanged(now: HostRefs, saved: HostRefs): boolean {
  if (now.nextId !== saved.nextId || now.freelist.length !== saved.freelist.length) return false;
  if (now.groups.size !== saved.groups.size) return false;
  for (let i = 0; i < saved.freelist.length; i++) if (now.freelist[i] !== saved.freelist[i]) return false;
  for (const [id, group] of saved.groups) {
    const live = now.groups.get(id);
    if (live?.size !== group.size) return false;
    for (const [ref, value] of group) if (live.get(ref) !== value) return false;
  }
  return true;
}

/** Math.random seeds from the CSPRNG, drawn many at a time (a draw costs microseconds, whatever its size). */
class SeedPool {
  private readonly words = new BigUint64Array(256);
  private used = this.words.length;
  next(): bigint {
    if (this.used === this.words.length) {
      randomFillSync(this.words);
      this.used = 0;
    }
    return this.words[this.used++]!;
  }
}

/**
 * Where a new context keeps its Math.random seed (QuickJS seeds it from the clock): two runtimes and contexts
 * made by `make` a clock tick apart, each in the new instance's memory, differ in that one aligned 64-bit word
 * only. Undefined when they differ anywhere else (then instances are not sealed). Leaves the memory as new.
 */
export function learnSeedAddress(
  memory: WebAssembly.Memory,
  pristine: PristineMemory,
  reach: number,
  make: () => unknown,
): number | undefined {
  make();
  const first = madeBytes(memory, pristine, reach);
  if (!reset(memory, pristine, reach)) return undefined;
  const tick = Date.now();
  while (Date.now() === tick); // the clock QuickJS reads moves in milliseconds: at most one, once per worker
  make();
  const second = madeBytes(memory, pristine, reach);
  if (!reset(memory, pristine, reach) || !first || !second || first.length !== second.length) return undefined;
  let word = -1;
  for (let i = 0; i < first.length; i++) {
    if (first[i] === second[i]) continue;
    if (word >= 0 && (i & ~7) !== word) return undefined;
    word = i & ~7;
  }
  return word >= 0 ? word : undefined;
}

/**
 * The memory up to the break after something was made in it. The stack below its touched top is zeroed
 * first: the C frames of making it left bytes there that no evaluation reads, and that every reset zeroes.
 */
function madeBytes(memory: WebAssembly.Memory, pristine: PristineMemory, reach: number): Uint8Array | undefined {
  const bytes = new Uint8Array(memory.buffer);
  if (bytes.length !== pristine.byteLength) return undefined;
  bytes.fill(0, Math.max(pristine.stackLow, pristine.stackTouched - reach), pristine.stackTouched);
  const breakNow = new DataView(memory.buffer).getUint32(pristine.breakAddress, true);
  if (breakNow < pristine.breakAtStart || breakNow > bytes.length) return undefined;
  return bytes.slice(0, breakNow);
}

const copyOf = (groups: Map<number, Map<number, object>>) =>
  new Map([...groups].map(([id, group]) => [id, new Map(group)]));
