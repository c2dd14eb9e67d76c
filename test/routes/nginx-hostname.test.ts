/**
 * The nginx recipe of docs/reverse-proxy.md as a deployer runs it: `a2e-gateway serve` with the
 * its companion config, behind nginx with its location block,
 * reached under a real (non-loopback) host name — not only 127.0.0.1.
 */
import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startCli } from '../helpers/cli.js';
import { readmeGatewayConfig, readmeLocationBlock, startNginx, type Nginx } from '../helpers/nginx.js';

const PUBLIC_HOST = 'gateway.example.com';

let dir: string;
let gateway: Awaited<ReturnType<typeof startCli>>;
let nginx: Nginx;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2e-nginx-host-'));
  const config = await readmeGatewayConfig();
  // The documented config names the public host; the test must really depend on it.
  expect(parseYaml(config)).toMatchObject({ server: { allowed_hosts: [PUBLIC_HOST] } });
  await writeFile(join(dir, 'gateway.yaml'), config);
  gateway = await startCli(['--config', 'gateway.yaml', '--port', '0'], {}, { cwd: dir });
  expect(gateway.firstLine).toMatch(/^a2e-gateway listening on http:\/\/127\.0\.0\.1:\d+\/a2e$/);
  nginx = await startNginx({ server: await readmeLocationBlock(Number(new URL(gateway.url).port)) });
});
afterAll(async () => {
  await nginx?.stop();
  gateway?.proc.kill('SIGTERM');
  await gateway?.proc;
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A request to nginx with any Host header (fetch cannot set Host). */
function viaNginx(
  method: string,
  path: string,
  host: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: nginx.port,
        method,
        path,
        headers: { Host: host, ...(payload ? { 'Content-Type': 'application/json' } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, json: text ? JSON.parse(text) : null }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe(`behind nginx, reached as ${PUBLIC_HOST}`, () => {
  it('lists and calls tools, and hands out URLs under the public name', async () => {
    const list = await viaNginx('POST', '/a2e/tool/list', PUBLIC_HOST, {});
    expect(list.status).toBe(200);
    expect(list.json.tools.map((t: { name: string }) => t.name)).toContain('list_dir');

    const started = await viaNginx('POST', '/a2e/tool/calls', PUBLIC_HOST, {
      tool_name: 'list_dir',
      arguments: { path: '.' },
    });
    expect(started.status).toBe(202);
    expect(started.json.result_url).toBe(`http://${PUBLIC_HOST}/a2e/tool/calls/${started.json.call_id}`);
    expect(started.headers.location).toBe(started.json.result_url);
    await expect
      .poll(async () => (await viaNginx('GET', `/a2e/tool/calls/${started.json.call_id}`, PUBLIC_HOST)).json.state, {
        timeout: 10_000,
      })
      .toBe('completed');
  });

  it('a page served from that name may call it (same origin), and /docs loads', async () => {
    const list = await viaNginx('POST', '/a2e/tool/list', PUBLIC_HOST, {}, { Origin: `http://${PUBLIC_HOST}` });
    expect(list.status).toBe(200);
    const docs = await new Promise<number>((resolve, reject) =>
      request({ host: '127.0.0.1', port: nginx.port, path: '/a2e/docs', headers: { Host: PUBLIC_HOST } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      })
        .on('error', reject)
        .end(),
    );
    expect(docs).toBe(200);
  });

  it('control: a name that is not listed is refused with 403 saying where to list it', async () => {
    const r = await viaNginx('POST', '/a2e/tool/list', 'other.example.com', {});
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ code: 'forbidden' });
    expect(r.json.message).toContain('server.allowed_hosts');
  });
});
