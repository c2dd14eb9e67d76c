/**
 * The QuickJS module rewritten to record its lowest stack pointer (src/tools/eval/stack-mark.ts): the build
 * eval_js ships is marked (else every reset zeroes all the stack an evaluation could reach), the mark follows
 * the stack pointer down and back, and a module it cannot read is left alone.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSSyncVariant } from 'quickjs-emscripten-core';
import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import { describe, expect, it } from 'vitest';
import { markStack, STACK_LOW_EXPORT } from '../../src/tools/eval/stack-mark.js';

const wasm = readFileSync(createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm'));

describe('markStack', () => {
  it('marks the QuickJS build eval_js uses, with a small bound for frames that do not move the stack pointer', () => {
    const marked = markStack(wasm);
    expect(marked).toBeDefined();
    expect(marked!.leafReach).toBeGreaterThan(0);
    expect(marked!.leafReach).toBeLessThan(64 * 1024);
    const exported = WebAssembly.Module.exports(new WebAssembly.Module(marked!.bytes));
    expect(exported).toContainEqual({ name: STACK_LOW_EXPORT, kind: 'global' });
  });

  it('records how deep an evaluation went: deeper recursion, lower mark', async () => {
    const module = await WebAssembly.compile(markStack(wasm)!.bytes);
    let low: WebAssembly.Global | undefined;
    const variant = newVariant(releaseSync as unknown as QuickJSSyncVariant, {
      emscriptenModule: {
        instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) {
          void WebAssembly.instantiate(module, imports).then((instance) => {
            low = instance.exports[STACK_LOW_EXPORT] as WebAssembly.Global;
            done(instance);
          });
          return {};
        },
      } as never,
    });
    const quickjs = await newQuickJSWASMModuleFromVariant(variant);
    const vm = quickjs.newContext();
    const depth = (n: number) => {
      low!.value = -1;
      vm.unwrapResult(vm.evalCode(`function f(n) { return n ? f(n - 1) + 1 : 0 }; f(${n})`)).dispose();
      return low!.value >>> 0;
    };
    const shallow = depth(1);
    const deep = depth(300);
    expect(shallow).toBeLessThan(0xffffffff);
    expect(deep).toBeLessThan(shallow - 300 * 64); // each JavaScript call takes C stack
    expect(depth(1)).toBe(shallow);
    vm.dispose();
  });

  it('leaves a module it cannot read alone', () => {
    expect(markStack(Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 10, 5]))).toBeUndefined();
    expect(markStack(Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]))).toBeUndefined();
  });
});
