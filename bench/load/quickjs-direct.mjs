/**
 * The raw QuickJS evaluation eval_js is compared with: one worker thread that
 * loads the same WebAssembly build once, then evaluates the code N times in a
 * row, each in a fresh runtime and context (what an evaluation needs at the
 * least). Prints per-evaluation latencies (ms, measured in the worker) and
 * the round trip seen from the main thread.
 *   node load/quickjs-direct.mjs '{"code":"1+1","runs":200}'
 */
import { Worker } from 'node:worker_threads';

const spec = JSON.parse(process.argv[2]);
const source = `
  const { parentPort, workerData } = require('node:worker_threads');
  (async () => {
    const { newQuickJSWASMModuleFromVariant } = await import('quickjs-emscripten-core');
    const variant = (await import('@jitl/quickjs-wasmfile-release-sync')).default;
    const mod = await newQuickJSWASMModuleFromVariant(variant);
    parentPort.on('message', (code) => {
      const t = performance.now();
      const rt = mod.newRuntime();
      const vm = rt.newContext();
      const r = vm.evalCode(code);
      const value = vm.dump(vm.unwrapResult(r));
      vm.dispose();
      rt.dispose();
      parentPort.postMessage({ value, ms: performance.now() - t });
    });
    parentPort.postMessage('ready');
  })();
`;
const worker = new Worker(source, { eval: true });
await new Promise((resolve) => worker.once('message', resolve));
const ms = [];
const inWorker = [];
for (let i = 0; i < spec.runs; i++) {
  const t = performance.now();
  worker.postMessage(spec.code);
  const reply = await new Promise((resolve) => worker.once('message', resolve));
  ms.push(performance.now() - t);
  inWorker.push(reply.ms);
  if (reply.value !== 2 && spec.code === '1+1') throw new Error(`QuickJS answered ${JSON.stringify(reply.value)}`);
}
await worker.terminate();
process.stdout.write(`${JSON.stringify({ ms, inWorker })}\n`);
