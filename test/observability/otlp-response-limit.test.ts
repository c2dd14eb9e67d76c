/**
 * A trace collector answering an export with an endless body: the OTLP
 * exporter reads at most 4 MiB of it (the exporter's own
 * MAX_RESPONSE_BODY_SIZE), the gateway logs one warning saying so and goes
 * on serving and exporting. A real `a2e-gateway serve` (dist/cli.js; `npm run
 * build` first) and a real HTTP collector on 127.0.0.1.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/a2a-stub.js';
import { startCli } from '../helpers/cli.js';
import { postJson } from '../helpers/server.js';

const MiB = 1024 * 1024;

/** Writes `x` for as long as the client reads. */
function endless(res: ServerResponse, sent: { bytes: number }): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 0x78);
  const more = () => {
    while (!res.destroyed) {
      sent.bytes += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
  };
  more();
}

describe('an OTLP collector answering with an endless body', () => {
  it('is read no further than 4 MiB: a warning saying so, and the gateway serves and exports on', async () => {
    const sent = { bytes: 0 };
    let exports = 0;
    const collector = createServer((req, res) => {
      exports++;
      req.resume().on('end', () => endless(res, sent));
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const dir = await mkdtemp(join(tmpdir(), 'a2e-otlp-limit-'));
    await writeFile(
      join(dir, 'gateway.yaml'),
      'tools:\n  fs: { enabled: false }\n  shell: { enabled: false }\n  http: { enabled: false }\n  eval: { enabled: false }\n',
    );
    const { url, proc } = await startCli(['--config', join(dir, 'gateway.yaml')], {
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    });
    let stderr = '';
    proc.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      expect((await postJson(`${url}/tool/list`, {})).status).toBe(200);
      const line = await waitFor(
        'the export warning',
        () => stderr.split('\n').find((l) => l.includes('telemetry:')),
        20_000,
      );
      expect(JSON.parse(line).msg).toBe(
        `telemetry: could not export spans: OTLP export response body exceeded size limit of ${4 * MiB} bytes`,
      );
      expect(sent.bytes).toBeLessThan(32 * MiB);
      // Still serving, and the next spans are sent to the collector again.
      const before = exports;
      expect((await postJson(`${url}/tool/list`, {})).status).toBe(200);
      await waitFor('another export', () => exports > before, 20_000);
      expect(proc.exitCode).toBeNull();
    } finally {
      proc.kill('SIGTERM');
      await proc;
      collector.closeAllConnections();
      await new Promise((resolve) => collector.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
