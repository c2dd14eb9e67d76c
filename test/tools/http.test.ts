/**
 * http_request over real HTTP, against a real server on 127.0.0.1. Refusals of
 * non-public addresses happen before any connection: tests never send traffic
 * beyond loopback, and the loopback server counts what reaches it so that a
 * broken check fails the test instead of passing silently.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/index.js';
import { deferred } from '../helpers/plugins.js';
import { callBody, openSse, postJson, startGateway, type TestGateway } from '../helpers/server.js';

let server: Server;
let origin: string; // http://127.0.0.1:<port>
let port: number;
let hits: string[] = [];
let slowClosed = deferred<void>();
const BIG = 1024 * 1024;

function handle(req: IncomingMessage, res: import('node:http').ServerResponse): void {
  const url = new URL(req.url!, origin);
  hits.push(url.pathname);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    switch (url.pathname) {
      case '/text':
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Test': 'yes' });
        res.end('héllo ✓');
        return;
      case '/binary':
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        res.end(Buffer.from([0, 0xff, 0xfe, 1]));
        return;
      case '/bad-utf8':
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end(Buffer.from([0x68, 0x69, 0xff]));
        return;
      case '/echo':
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() }));
        return;
      case '/big': {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': String(BIG) });
        const piece = Buffer.alloc(16 * 1024, 'a');
        let sent = 0;
        const pump = () => {
          while (sent < BIG) {
            sent += piece.length;
            if (!res.write(piece)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
        return;
      }
      case '/redirect':
        res.writeHead(Number(url.searchParams.get('status') ?? 302), { Location: url.searchParams.get('to')! });
        res.end();
        return;
      case '/loop':
        res.writeHead(302, { Location: '/loop' });
        res.end();
        return;
      case '/slow': {
        const closedNow = slowClosed; // the deferred of the request being served
        res.on('close', () => closedNow.resolve());
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('started…'); // then never ends
        return;
      }
      default:
        res.writeHead(404);
        res.end();
    }
  });
}

let open: TestGateway; // allow_hosts: 127.0.0.1
let closed: TestGateway; // defaults
let byName: TestGateway; // allow_hosts: localhost (a name, not the address)

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  closed = await startGateway({ config: { tools: { http: {} } } });
  open = await startGateway({
    config: { tools: { http: { allow_hosts: ['127.0.0.1'], max_response_bytes: 256 * 1024, max_redirects: 3 } } },
  });
  byName = await startGateway({ config: { tools: { http: { allow_hosts: ['localhost'] } } } });
});
afterAll(async () => {
  await Promise.all([open?.close(), closed?.close(), byName?.close()]);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  hits = [];
});

const call = async (gw: TestGateway, args: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const r = await postJson(`${gw.url}/tool/call`, callBody('http_request', args, { timeout: 10, ...extra }));
  expect(r.status).toBe(200);
  return r.json.data as {
    success: boolean;
    data: any;
    error: string | null;
    truncated: boolean;
    events: any[];
    duration_ms: number;
    summary: unknown;
  };
};
/** A request that must be refused before connecting: fast, with the policy's message, nothing reaching our server. */
const refused = async (gw: TestGateway, url: string) => {
  const d = await call(gw, { url, timeout: 3 });
  expect(d.success).toBe(false);
  expect(d.error).toMatch(/add it to tools\.http\.allow_hosts to allow it$/);
  expect(d.error).not.toMatch(/timed out/);
  expect(hits).toEqual([]);
  return d.error!;
};

describe('http_request: happy paths', () => {
  it('is listed as a native, streaming tool', async () => {
    const r = await postJson(`${open.url}/tool/list`, { filter_tags: ['http'] });
    expect(r.json.tools.map((t: any) => [t.name, t.kind, t.streaming, t.idempotent])).toEqual([
      ['http_request', 'native', true, false],
    ]);
  });

  it('GET returns status, headers and a UTF-8 body as text', async () => {
    const d = await call(open, { url: `${origin}/text` });
    expect(d.success).toBe(true);
    expect(d.data).toMatchObject({
      url: `${origin}/text`,
      status: 200,
      body: 'héllo ✓',
      body_encoding: 'utf8',
      truncated: false,
      redirects: 0,
      bytes: 10,
    });
    expect(d.data.headers['x-test']).toBe('yes');
    expect(d.data.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('binary bodies, and textual types that are not valid UTF-8, come back as base64', async () => {
    const bin = await call(open, { url: `${origin}/binary` });
    expect(bin.data).toMatchObject({
      body_encoding: 'base64',
      body: Buffer.from([0, 0xff, 0xfe, 1]).toString('base64'),
    });
    const bad = await call(open, { url: `${origin}/bad-utf8` });
    expect(bad.data).toMatchObject({
      body_encoding: 'base64',
      body: Buffer.from([0x68, 0x69, 0xff]).toString('base64'),
    });
  });

  it('POST sends the method, headers and body', async () => {
    const d = await call(open, {
      method: 'POST',
      url: `${origin}/echo`,
      headers: { 'Content-Type': 'text/plain', 'X-Trace': 't-1' },
      body: 'ping',
    });
    expect(d.data.status).toBe(201);
    expect(d.data.body_encoding).toBe('utf8');
    const echoed = JSON.parse(d.data.body);
    expect(echoed).toMatchObject({
      method: 'POST',
      body: 'ping',
      headers: { 'x-trace': 't-1', 'content-type': 'text/plain' },
    });
    const get = await call(open, { method: 'GET', url: `${origin}/echo`, body: 'x' });
    expect(get.error).toBe('a GET request cannot have a body; use POST, PUT or PATCH');
  });

  it('a large response streams progress events (bytes received) over SSE and is cut at max_response_bytes', async () => {
    const s = await openSse(`${open.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('http_request', { url: `${origin}/big` }, { streaming: true })),
    });
    const events = await s.rest();
    const progress = events.filter((e) => e.event === 'tool/event').map((e) => e.json);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (const p of progress) expect(p).toMatchObject({ kind: 'progress', data: { bytes_total: BIG } });
    const received = progress.map((p) => p.data.bytes_received as number);
    expect(received).toEqual([...received].sort((a, b) => a - b));
    expect(received[0]).toBeGreaterThanOrEqual(64 * 1024);
    const final = events.at(-1)!;
    expect(final.event).toBe('tool/call/resp');
    expect(final.json.data).toMatchObject({
      success: true,
      truncated: true,
      data: { status: 200, truncated: true, bytes: 256 * 1024 },
    });
    expect(final.json.data.data.body).toBe('a'.repeat(256 * 1024));
  });

  it('the same without streaming: no events, still truncated', async () => {
    const d = await call(open, { url: `${origin}/big` });
    expect(d.events).toEqual([]);
    expect(d.truncated).toBe(true);
    expect(d.data.bytes).toBe(256 * 1024);
  });

  it('follows redirects to allowed hosts, counting them', async () => {
    const d = await call(open, { url: `${origin}/redirect?to=${encodeURIComponent('/redirect?to=/text&status=307')}` });
    expect(d.data).toMatchObject({ status: 200, body: 'héllo ✓', redirects: 2, url: `${origin}/text` });
    expect(hits).toEqual(['/redirect', '/redirect', '/text']);
  });

  it('a 303 after POST continues as GET without the body; credentials do not follow to another origin', async () => {
    const to = `http://localhost:${port}/echo`; // another origin (host differs), same server
    const d = await call(open, {
      method: 'POST',
      url: `${origin}/redirect?status=303&to=${encodeURIComponent(to)}`,
      headers: {
        Authorization: 'Bearer secret',
        'X-Keep': 'kept',
        Accept: 'application/json',
        'Content-Type': 'text/plain',
      },
      body: 'payload',
    });
    expect(d.data).toMatchObject({ status: 201, redirects: 1, url: to });
    const echoed = JSON.parse(d.data.body);
    expect(echoed.method).toBe('GET');
    expect(echoed.body).toBe('');
    // Across origins only a safe list of headers follows (issue 20): Accept does, X-Keep no longer does.
    expect(echoed.headers.accept).toBe('application/json');
    expect(echoed.headers['x-keep']).toBeUndefined();
    expect(echoed.headers.authorization).toBeUndefined();
    expect(echoed.headers['content-type']).toBeUndefined();
  });

  it('stops after max_redirects', async () => {
    const d = await call(open, { url: `${origin}/loop` });
    expect(d.error).toBe('stopped after 3 redirects (tools.http.max_redirects is 3); the last one pointed to /loop');
  });

  it('honours its timeout and the call being canceled (the connection is closed)', async () => {
    const t = await call(open, { url: `${origin}/slow`, timeout: 0.5 });
    expect(t.error).toBe(`request to 127.0.0.1:${port} timed out after 0.5 s; raise "timeout" if it needs longer`);

    slowClosed = deferred<void>();
    hits = [];
    const s = await openSse(`${open.url}/tool/call`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('http_request', { url: `${origin}/slow` }, { streaming: true, timeout: 60 })),
    });
    while (!hits.filter((h) => h === '/slow').length) await new Promise((r) => setImmediate(r));
    s.abort(); // client disconnect → ctx.signal → the outbound request is aborted
    await slowClosed.promise; // the test's 30 s timeout bounds this wait
  });
});

describe('http_request: SSRF refusals (before connecting)', () => {
  it('loopback is refused by default', async () => {
    expect(await refused(closed, `${origin}/text`)).toBe(
      'host 127.0.0.1 is a loopback address; add it to tools.http.allow_hosts to allow it',
    );
    expect(await refused(closed, `http://localhost:${port}/text`)).toBe(
      'host localhost resolves to 127.0.0.1, a loopback address; add it to tools.http.allow_hosts to allow it',
    );
  });

  it("https names are checked the same way (the lookup is the TLS socket's too)", async () => {
    expect(await refused(closed, `https://localhost:${port}/text`)).toBe(
      'host localhost resolves to 127.0.0.1, a loopback address; add it to tools.http.allow_hosts to allow it',
    );
    expect(await refused(closed, 'https://169.254.169.254/')).toContain('link-local');
  });

  it('the cloud metadata address is refused by default', async () => {
    const e = await refused(closed, 'http://169.254.169.254/latest/meta-data/');
    expect(e).toBe(
      'host 169.254.169.254 is a link-local address (where cloud metadata services live); add it to tools.http.allow_hosts to allow it',
    );
    // also when it is "allowed" only by a name entry: the entry is for localhost, not for this address
    await refused(byName, 'http://169.254.169.254/latest/meta-data/');
  });

  it('private, CGNAT, unique-local, multicast and other non-public ranges are refused', async () => {
    expect(await refused(closed, 'http://10.0.0.5/')).toBe(
      'host 10.0.0.5 is a private address; add it to tools.http.allow_hosts to allow it',
    );
    expect(await refused(closed, 'http://192.168.1.1/')).toContain('a private address');
    expect(await refused(closed, 'http://172.16.0.1/')).toContain('a private address');
    expect(await refused(closed, 'http://100.64.0.1/')).toContain('a carrier-grade NAT address');
    expect(await refused(closed, 'http://224.0.0.1/')).toContain('a multicast address');
    expect(await refused(closed, 'http://0.0.0.0/')).toContain('an unspecified address');
    expect(await refused(closed, 'http://255.255.255.255/')).toContain('the broadcast address');
    expect(await refused(closed, 'http://[fc00::1]/')).toContain('unique-local');
    expect(await refused(closed, 'http://[fe80::1]/')).toContain('link-local');
    expect(await refused(closed, 'http://[ff02::1]/')).toContain('multicast');
    expect(await refused(closed, `http://[::1]:${port}/`)).toContain('a loopback address');
    expect(await refused(closed, 'http://[::]/')).toContain('unspecified');
    expect(await refused(closed, 'http://[::7f00:1]/')).toContain('non-public');
  });

  it('IP literals in every notation are normalised and checked', async () => {
    for (const host of ['2130706433', '0177.0.0.1', '0x7f.1', '127.1', '0x7f000001', '127.0.0.01']) {
      expect(await refused(closed, `http://${host}:${port}/text`)).toBe(
        'host 127.0.0.1 is a loopback address; add it to tools.http.allow_hosts to allow it',
      );
    }
    expect(await refused(closed, `http://[::ffff:127.0.0.1]:${port}/text`)).toBe(
      'host ::ffff:7f00:1 (127.0.0.1) is a loopback address; add it to tools.http.allow_hosts to allow it',
    );
    expect(await refused(closed, `http://[::ffff:7f00:1]:${port}/text`)).toContain('loopback');
    expect(await refused(closed, `http://[64:ff9b::7f00:1]:${port}/text`)).toBe(
      'host 64:ff9b::7f00:1 is a NAT64 address; add it to tools.http.allow_hosts to allow it',
    );
    expect(await refused(closed, 'http://[::ffff:a9fe:a9fe]/')).toContain('(169.254.169.254) is a link-local address');
  });

  it('only http and https', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/', 'gopher://127.0.0.1/']) {
      const d = await call(closed, { url });
      expect(d.error).toMatch(/^only http and https URLs are allowed, not [a-z]+:$/);
    }
    expect((await call(closed, { url: 'not a url' })).error).toContain('is not a valid absolute URL');
  });

  it('allow_hosts lets the loopback test server through (by address, and by name)', async () => {
    expect((await call(open, { url: `${origin}/text` })).data.status).toBe(200);
    // an address entry covers names resolving to it
    expect((await call(open, { url: `http://localhost:${port}/text` })).data.status).toBe(200);
    const d = await call(byName, { url: `http://localhost:${port}/text` });
    expect(d.data).toMatchObject({ status: 200, body: 'héllo ✓' });
  });

  it('allow_private lets every address through', async () => {
    const gw = await startGateway({ config: { tools: { http: { allow_private: true } } } });
    try {
      expect((await call(gw, { url: `${origin}/text` })).data.status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('a redirect from an allowed host to a refused one is refused, on every hop', async () => {
    for (const to of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.5/',
      `http://[::1]:${port}/text`,
      'http://0xa000005/',
    ]) {
      hits = [];
      const d = await call(open, { url: `${origin}/redirect?to=${encodeURIComponent(to)}`, timeout: 3 });
      expect(d.success).toBe(false);
      expect(d.error).toMatch(/add it to tools\.http\.allow_hosts to allow it$/);
      expect(hits).toEqual(['/redirect']);
    }
    // allowed by name (localhost), redirected to the same server by address: the second hop is checked and refused
    hits = [];
    const d = await call(byName, {
      url: `http://localhost:${port}/redirect?to=${encodeURIComponent(`${origin}/text`)}`,
      timeout: 3,
    });
    expect(d.error).toBe('host 127.0.0.1 is a loopback address; add it to tools.http.allow_hosts to allow it');
    expect(hits).toEqual(['/redirect']);
  });

  it('a redirect to another scheme is refused', async () => {
    const d = await call(open, { url: `${origin}/redirect?to=${encodeURIComponent('file:///etc/passwd')}` });
    expect(d.error).toBe(`127.0.0.1:${port} redirected to a file: URL; only http and https are followed`);
  });
});

describe('tools.http config', () => {
  it('rejects an allow_hosts entry that is neither a name, an address nor a range', () => {
    expect(() => parseConfig({ tools: { http: { allow_hosts: ['10.0.0.0/99'] } } })).toThrow(
      /tools\.http\.allow_hosts\.0/,
    );
    expect(() => parseConfig({ tools: { http: { allow_hosts: ['http://x/'] } } })).toThrow(
      /expected a host name, an IP address or a CIDR range/,
    );
    expect(
      parseConfig({ tools: { http: { allow_hosts: ['intranet.local', '10.0.0.5', 'fd00::/8'] } } }).tools.http
        .allow_hosts,
    ).toHaveLength(3);
  });
});
