/**
 * http_request and origins (issue 20, finding 7): a redirect to another origin
 * carries only a safe list of headers and never the request body; an
 * allow_hosts entry with a port allows that port only. Two real servers on
 * 127.0.0.1, on different ports: two origins. Each records what reached it,
 * so a leak fails the test.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/index.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

interface Hit {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Origin {
  server: Server;
  port: number;
  url: string;
  hits: Hit[];
}

/** A server that records every request; /redirect?status=&to= redirects, anything else echoes the request. */
async function startOrigin(): Promise<Origin> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      const hit = {
        method: req.method!,
        path: url.pathname,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      hits.push(hit);
      if (url.pathname === '/redirect') {
        res.writeHead(Number(url.searchParams.get('status')), { Location: url.searchParams.get('to')! });
        res.end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(hit));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, url: `http://127.0.0.1:${port}`, hits };
}

let a: Origin;
let b: Origin;
let open: TestGateway; // allow_hosts: 127.0.0.1 (any port)
let onlyA: TestGateway; // allow_hosts: 127.0.0.1:<a.port>, localhost:<a.port>

beforeAll(async () => {
  [a, b] = await Promise.all([startOrigin(), startOrigin()]);
  open = await startGateway({ config: { tools: { http: { allow_hosts: ['127.0.0.1'] } } } });
  onlyA = await startGateway({
    config: { tools: { http: { allow_hosts: [`127.0.0.1:${a.port}`, `localhost:${a.port}`] } } },
  });
});
afterAll(async () => {
  await Promise.all([open?.close(), onlyA?.close()]);
  for (const o of [a, b]) {
    o?.server.closeAllConnections();
    await new Promise((resolve) => o?.server.close(resolve));
  }
});
beforeEach(() => {
  a.hits.length = 0;
  b.hits.length = 0;
});

const call = async (gw: TestGateway, args: Record<string, unknown>) => {
  const r = await postJson(`${gw.url}/tool/call`, callBody('http_request', args, { timeout: 10 }));
  expect(r.status).toBe(200);
  return r.json.data as { success: boolean; data: any; error: string | null };
};

const redirect = (from: Origin, status: number, to: string) =>
  `${from.url}/redirect?status=${status}&to=${encodeURIComponent(to)}`;

/** Every header a caller might send: credentials of several shapes, and the safe ones. */
const SENT = {
  Authorization: 'Bearer secret-a',
  Cookie: 'sid=secret-b',
  'X-Api-Key': 'secret-c',
  'X-Auth-Token': 'secret-d',
  'X-Custom': 'secret-e',
  Accept: 'application/json',
  'Accept-Language': 'de',
  'Content-Language': 'fr',
  'User-Agent': 'probe/1.0',
};
const SAFE = {
  accept: 'application/json',
  'accept-language': 'de',
  'content-language': 'fr',
  'user-agent': 'probe/1.0',
};

describe('redirects across origins', () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it(`a ${status} to another origin carries only Accept, Accept-Language, Content-Language and User-Agent`, async () => {
      const d = await call(open, { url: redirect(a, status, `${b.url}/landing`), headers: SENT });
      expect(d.success, d.error ?? '').toBe(true);
      expect(d.data).toMatchObject({ status: 200, redirects: 1, url: `${b.url}/landing` });
      expect(b.hits).toHaveLength(1);
      const got = b.hits[0]!.headers;
      expect(got).toMatchObject(SAFE);
      for (const name of ['authorization', 'cookie', 'x-api-key', 'x-auth-token', 'x-custom'])
        expect(got[name], name).toBeUndefined();
      expect(JSON.stringify(b.hits)).not.toMatch(/secret-/);
    });
  }

  it('a redirect within the same origin keeps every header and a 307 body', async () => {
    const d = await call(open, {
      method: 'POST',
      url: redirect(a, 307, '/landing'),
      headers: { ...SENT, 'Content-Type': 'text/plain' },
      body: 'payload',
    });
    expect(d.data).toMatchObject({ status: 200, redirects: 1, url: `${a.url}/landing` });
    const landed = a.hits.at(-1)!;
    expect(landed).toMatchObject({ method: 'POST', path: '/landing', body: 'payload' });
    expect(landed.headers).toMatchObject({
      authorization: 'Bearer secret-a',
      'x-api-key': 'secret-c',
      'x-auth-token': 'secret-d',
      'content-type': 'text/plain',
    });
  });

  for (const status of [307, 308]) {
    it(`a ${status} that would re-send the body to another origin is not followed: the caller gets the redirect`, async () => {
      const d = await call(open, {
        method: 'POST',
        url: redirect(a, status, `${b.url}/landing`),
        headers: { ...SENT, 'Content-Type': 'text/plain' },
        body: 'secret-body',
      });
      expect(d.success).toBe(true);
      expect(d.data).toMatchObject({ status, redirects: 0, url: redirect(a, status, `${b.url}/landing`) });
      expect(d.data.headers.location).toBe(`${b.url}/landing`);
      expect(b.hits).toHaveLength(0);
    });
  }

  it('a 307 of a body-less PUT to another origin is followed, still with the safe headers only', async () => {
    const d = await call(open, { method: 'PUT', url: redirect(a, 307, `${b.url}/landing`), headers: SENT });
    expect(d.data).toMatchObject({ status: 200, redirects: 1 });
    expect(b.hits).toHaveLength(1);
    expect(b.hits[0]!.method).toBe('PUT');
    expect(b.hits[0]!.headers['x-api-key']).toBeUndefined();
  });

  it('headers dropped at a cross-origin hop stay dropped when a later hop returns to the first origin', async () => {
    const back = `${a.url}/landing`;
    const d = await call(open, { url: redirect(a, 302, redirect(b, 302, back)), headers: SENT });
    expect(d.data).toMatchObject({ status: 200, redirects: 2, url: back });
    expect(a.hits.at(-1)!.headers['x-auth-token']).toBeUndefined();
    expect(a.hits.at(-1)!.headers.authorization).toBeUndefined();
  });
});

describe('allow_hosts entries with a port', () => {
  it('allow only that port, for an address and for a name', async () => {
    for (const host of ['127.0.0.1', 'localhost']) {
      const ok = await call(onlyA, { url: `http://${host}:${a.port}/x` });
      expect(ok.success, ok.error ?? '').toBe(true);
      const refused = await call(onlyA, { url: `http://${host}:${b.port}/x` });
      expect(refused.success).toBe(false);
      expect(refused.error).toContain(`tools.http.allow_hosts allows it on port ${a.port} only, not on port ${b.port}`);
    }
    expect(a.hits).toHaveLength(2);
    expect(b.hits).toHaveLength(0);
  });

  it('check every redirect hop on its own port: a redirect from the allowed port to another is refused', async () => {
    const d = await call(onlyA, { url: redirect(a, 302, `${b.url}/landing`) });
    expect(d.success).toBe(false);
    expect(d.error).toContain(`allows it on port ${a.port} only`);
    expect(a.hits).toHaveLength(1);
    expect(b.hits).toHaveLength(0);
  });

  it('are validated: a port must be 1-65535, IPv6 addresses take brackets', () => {
    const hosts = (list: string[]) => parseConfig({ tools: { http: { allow_hosts: list } } }).tools.http.allow_hosts;
    expect(
      hosts(['intranet.local:8443', '10.0.0.5:80', '10.0.0.0/8:8080', '[fd00::1]:443', 'fd00::1', '[::1]']),
    ).toHaveLength(6);
    for (const bad of ['10.0.0.5:0', '10.0.0.5:65536', 'intranet.local:http', 'intranet.local:', '[fd00::1]:x']) {
      expect(() => hosts([bad]), bad).toThrow(/optionally with a port/);
    }
  });
});
