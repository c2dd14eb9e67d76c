/**
 * Start-up loads what the first request needs and no more (BENCHMARKS.md scenario 11): `a2e-gateway serve`
 * with the memory store and native tools does not load the Redis client, undici, prom-client (and the
 * OpenTelemetry API it pulls in), QuickJS or the CLI's own HTTP client before its listening line (dist/ is a
 * bundle: each chunk loaded counts as the modules it was built from, test/helpers/loaded-modules.ts); http_request loads
 * undici with its first call and works, the first GET /metrics loads prom-client and serves the metrics.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli.js';
import { loadedModulesIn } from '../helpers/loaded-modules.js';
import { postJson } from '../helpers/server.js';

const RECORD_IMPORTS = fileURLToPath(new URL('../fixtures/record-imports.mjs', import.meta.url));

let dir: string;
let target: Server;
let targetUrl: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2e-startup-'));
  target = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/plain' }).end('hello from the target'),
  ).listen(0, '127.0.0.1');
  await new Promise((resolve) => target.once('listening', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}/`;
  // The native tools as configured by default, but for a workspace of the test's own and http_request allowed to reach the target.
  await writeFile(
    join(dir, 'gateway.yaml'),
    `server:\n  port: 0\ntools:\n  fs: { root: ${JSON.stringify(join(dir, 'ws'))} }\n  http: { allow_private: true }\n`,
  );
});
afterAll(async () => {
  await new Promise((resolve) => target?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('a2e-gateway serve start-up', () => {
  it('loads neither the Redis client, undici, prom-client nor the CLI client before listening; the first http_request loads undici, the first scrape prom-client', async () => {
    const log = join(dir, 'serve.imports');
    await writeFile(log, '');
    const { url, proc } = await startCli(['--config', join(dir, 'gateway.yaml')], {
      NODE_OPTIONS: `--import=${RECORD_IMPORTS}`,
      A2E_IMPORTS_LOG: log,
    });
    try {
      const atStart = loadedModulesIn(log);
      // The recorder works: it saw the server (in a chunk of the bundle; CommonJS packages are checked with prom-client below).
      expect(atStart.some((u) => u.endsWith('/src/server.ts'))).toBe(true);
      const loaded = (what: RegExp, imports = atStart) => imports.filter((u) => what.test(u));
      expect(loaded(/\/node_modules\/prom-client\//), 'prom-client, before any scrape').toEqual([]);
      expect(
        loaded(/\/node_modules\/@opentelemetry\//),
        'the OpenTelemetry API, without telemetry and before any scrape',
      ).toEqual([]);
      expect(loaded(/\/node_modules\/@redis\//), 'the Redis client, with store.kind memory').toEqual([]);
      expect(loaded(/\/src\/store\/redis\//), 'the Redis stores, with store.kind memory').toEqual([]);
      expect(loaded(/\/node_modules\/undici\//), 'undici, before any http_request').toEqual([]);
      expect(
        loaded(/\/node_modules\/(quickjs-emscripten-core|@jitl)\/|\/src\/tools\/eval\/worker\.ts$/),
        'QuickJS, before any eval_js',
      ).toEqual([]);
      expect(loaded(/\/src\/cli\/(client|http-fetch)\.ts$|\/node_modules\/openapi-fetch\//), 'the CLI client').toEqual(
        [],
      );

      const res = await postJson(`${url}/tool/call`, {
        type: 'tool/call/req',
        tool_name: 'http_request',
        arguments: { url: targetUrl },
      });
      expect(res.json.data).toMatchObject({ success: true, data: { status: 200, body: 'hello from the target' } });
      const after = loadedModulesIn(log);
      expect(loaded(/\/node_modules\/undici\//, after).length).toBeGreaterThan(0);

      const scrape = await fetch(`${url}/metrics`);
      expect(scrape.status).toBe(200);
      const metrics = await scrape.text();
      expect(metrics).toMatch(
        /^a2e_tool_calls_total\{tool="http_request",kind="native",door="rest",outcome="success"\} 1$/m,
      );
      expect(metrics).toContain('process_cpu_seconds_total');
      const scraped = loadedModulesIn(log);
      // CommonJS, recorded as it is required.
      expect(loaded(/\/node_modules\/prom-client\/lib\//, scraped).length).toBeGreaterThan(0);

      // The shell sandbox is checked after listening; /readyz says ready once that check has ended.
      await expect.poll(async () => (await fetch(`${url}/readyz`)).status, { timeout: 15_000 }).toBe(200);
    } finally {
      proc.kill('SIGTERM');
      await proc;
    }
  });
});
