/**
 * A test plugin whose tool is driven by the test: `gated` emits event i, then
 * waits until the test opens gate i. So a test can prove an event arrived
 * while the tool was still running, and cut or resume streams at known points.
 */
import type { ToolContext, ToolDefinitionInput, ToolPlugin } from '../../src/index.js';
import { deferred, definePlugin, echoTool, type Handler } from './plugins.js';

export interface GateControl extends GatedTool {
  plugin: ToolPlugin;
}

/** The `gated` tool alone, for a suite that builds its own plugin around it, and its controls. */
export interface GatedTool {
  tool: [ToolDefinitionInput, Handler];
  /** Let call `key` go past event `i`. */
  open(key: string, i: number): void;
  /** performance.now() when call `key` emitted each event. */
  emittedAt(key: string): number[];
  /** Resolves with the abort reason when call `key` is stopped from outside. */
  aborted(key: string): Promise<string>;
}

/** Gate i of call `key`, made by whichever side comes first (the tool waiting on it, or the test opening it). */
export function gateMap(): (key: string, i: number) => ReturnType<typeof deferred<void>> {
  const gates = new Map<string, ReturnType<typeof deferred<void>>>();
  return (key, i) => {
    const k = `${key}#${i}`;
    let d = gates.get(k);
    if (!d) gates.set(k, (d = deferred()));
    return d;
  };
}

/** A plugin with `echo`, `gated` and `burst` (emits `count` events at once, then returns). */
export function gatedPlugin(): GateControl {
  const gated = gatedTool();
  const plugin = definePlugin('gated', [
    echoTool,
    gated.tool,
    [
      {
        name: 'burst',
        description: 'Emits `count` events at once, then returns',
        input_parameters: [{ name: 'count', type: 'integer', description: 'Number of events', required: true }],
      },
      (args, ctx: ToolContext) => {
        for (let i = 0; i < Number(args.count); i++) ctx.emit('log', { level: 'info', message: `line ${i}` });
        return { count: args.count };
      },
    ],
  ]);
  return { plugin, ...gated };
}

export function gatedTool(): GatedTool {
  const gate = gateMap();
  const emitted = new Map<string, number[]>();
  const aborts = new Map<string, ReturnType<typeof deferred<string>>>();
  const abort = (key: string) => {
    let d = aborts.get(key);
    if (!d) aborts.set(key, (d = deferred<string>()));
    return d;
  };

  return {
    tool: [
      {
        name: 'gated',
        description: 'Emits event i, then waits for the test to open gate i',
        input_parameters: [
          { name: 'key', type: 'string', description: 'Names this call for the test', required: true },
          { name: 'steps', type: 'integer', description: 'Number of events', required: true },
        ],
      },
      async (args, ctx: ToolContext) => {
        const key = String(args.key);
        const steps = Number(args.steps);
        const times: number[] = [];
        emitted.set(key, times);
        ctx.signal.addEventListener('abort', () => abort(key).resolve(String((ctx.signal.reason as Error).message)), {
          once: true,
        });
        for (let i = 0; i < steps; i++) {
          ctx.emit('progress', { pct: Math.round((i / steps) * 100), message: `step ${i}` });
          times.push(performance.now());
          await Promise.race([
            gate(key, i).promise,
            new Promise((_, reject) =>
              ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }),
            ),
          ]);
        }
        return { key, steps };
      },
    ],
    open: (key, i) => gate(key, i).resolve(),
    emittedAt: (key) => emitted.get(key) ?? [],
    aborted: (key) => abort(key).promise,
  };
}
