/**
 * `a2e-gateway mcp-stdio` (dist/cli.js; `npm run build` first) with tracing on: a call comes without an HTTP
 * request to decide for it, so each samples as a trace of its own (tracing.ts traceCallsAsRoots, decided by
 * the sampler's draw for a new trace): with sample_ratio 1 every call's span arrives, as a root; with 0 none.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

describe('tracing in mcp-stdio', () => {
  let dir: string;
  let receiver: OtlpReceiver;
  const children: ChildProcessWithoutNullStreams[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-tracing-stdio-'));
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Start mcp-stdio with `ratio`, initialize it and make `calls` eval_js calls; their answers. */
  async function callThrough(name: string, ratio: number, calls: number): Promise<unknown[]> {
    const config = join(dir, `${name}.yaml`);
    writeFileSync(
      config,
      `telemetry:\n  otlp_endpoint: ${receiver.url}\n  service_name: ${name}\n  sample_ratio: ${ratio}\n` +
        'tools:\n  fs: { enabled: false }\n  shell: { enabled: false }\n  http: { enabled: false }\n',
    );
    const child = spawn(process.execPath, [CLI, 'mcp-stdio', '--config', config], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', OTEL_BSP_SCHEDULE_DELAY: '50' },
    });
    children.push(child);
    const pending = new Map<string, (m: { result?: unknown }) => void>();
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = JSON.parse(line) as { id: string; result?: unknown };
      pending.get(m.id)?.(m);
    });
    const ask = (id: string, method: string, params: unknown) =>
      new Promise<{ result?: unknown }>((resolve) => {
        pending.set(id, resolve);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    await ask('init', 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });
    const answers = [];
    for (let i = 0; i < calls; i++) {
      const res = await ask(`c${i}`, 'tools/call', { name: 'eval_js', arguments: { code: `${i}+1` } });
      answers.push(res.result);
    }
    return answers;
  }

  it('records every call as a root span of its own at sample_ratio 1, and none at 0', async () => {
    const none = await callThrough('stdio-ratio-0', 0, 3);
    const all = await callThrough('stdio-ratio-1', 1, 3);
    for (const r of [...none, ...all]) {
      expect(r).toHaveProperty('content');
      expect(r).not.toMatchObject({ isError: true });
    }
    const spans = await waitFor(
      'three call spans',
      () => {
        const found = receiver.spans.filter((s) => s.name === 'call eval_js');
        return found.length >= 3 ? found : undefined;
      },
      20_000,
    );
    // Each its own trace, with no parent.
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(3);
    for (const s of spans) expect(s.parentSpanId ?? '').toBe('');
    // The ratio-0 process's calls made none (its exports would have come with the others').
    expect(spans).toHaveLength(3);
  });
});
