/**
 * Plugins used by the tests, written against the public plugin API only.
 */
import { ToolError, ToolOutput, type ToolContext, type ToolDefinitionInput, type ToolPlugin } from '../../src/index.js';

export type Handler = (args: Record<string, unknown>, ctx: ToolContext) => unknown;

/** A plugin from a list of [definition, handler] pairs. */
export function definePlugin(
  name: string,
  tools: [ToolDefinitionInput, Handler][],
  extra: Partial<ToolPlugin> = {},
): ToolPlugin {
  const handlers = new Map(tools.map(([d, h]) => [d.name, h]));
  const defs = tools.map(([d]) => d);
  return {
    name,
    listTools: () => defs,
    executeTool: (tool, args, ctx) => handlers.get(tool)!(args, ctx),
    ...extra,
  };
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A promise with its resolve function, to let tests and tools wait on each other. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export const echoTool: [ToolDefinitionInput, Handler] = [
  {
    name: 'echo',
    description: 'Echo the given text back',
    input_parameters: [{ name: 'text', type: 'string', description: 'Text to echo', required: true }],
    output_parameters: [{ name: 'text', type: 'string', description: 'The same text' }],
    idempotent: true,
    tags: ['test', 'text'],
    kind: 'native',
  },
  (args) => ({ text: args.text }),
];

export const failTool: [ToolDefinitionInput, Handler] = [
  {
    name: 'fail',
    description: 'Always fails with a ToolError',
    input_parameters: [{ name: 'message', type: 'string', description: 'Error message', required: false }],
    tags: ['test'],
  },
  (args) => {
    throw new ToolError(String(args.message ?? 'it failed on purpose'), { data: { partial: true }, exitCode: 3 });
  },
];

export const crashTool: [ToolDefinitionInput, Handler] = [
  {
    name: 'crash',
    description: 'Throws an unexpected error mentioning a host path',
    tags: ['test'],
  },
  () => {
    throw new Error("ENOENT: no such file or directory, open '/home/secret-user/.config/app.json'");
  },
];

export const outputTool: [ToolDefinitionInput, Handler] = [
  {
    name: 'big_output',
    description: 'Returns a string of the requested size',
    input_parameters: [{ name: 'bytes', type: 'integer', description: 'Size', required: true }],
    tags: ['test'],
  },
  (args) => new ToolOutput({ data: { text: 'x'.repeat(Number(args.bytes)) }, summary: `${String(args.bytes)} bytes` }),
];
