/**
 * http_request reads the answer straight from the connection (an undici
 * dispatch handler): bodies in many pieces, with and without Content-Length,
 * come back byte for byte; the cap is exact; a lying Content-Length does not
 * let more through; a followed redirect's body is dropped (a large one closes
 * its connection) and the next hop still answers. Against a real server on
 * 127.0.0.1 that writes its bodies in uneven pieces, each flushed on its own.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const CAP = 64 * 1024;
let server: Server;
let origin: string;
let gw: TestGateway;
/** Redirect answers closed before they were written to their end. */
let cutRedirects = 0;

/** Deterministic bytes (not one repeated byte: a misplaced piece must show). */
function pattern(size: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + (i >> 8)) & 0xff;
  return b;
}

/** Write `body` in uneven pieces, each after the previous one was flushed, so they arrive as separate chunks. */
function writeInPieces(res: ServerResponse, body: Buffer): void {
  const sizes = [1, 700, 3, 9000, 17, 40_000];
  let at = 0;
  let i = 0;
  const next = () => {
    if (at >= body.length) return void res.end();
    const piece = body.subarray(at, at + sizes[i++ % sizes.length]!);
    at += piece.length;
    res.write(piece, () => setImmediate(next));
  };
  next();
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url!, origin);
  const size = Number(url.searchParams.get('size') ?? 0);
  const body = pattern(size);
  switch (url.pathname) {
    case '/sized': // Content-Length given
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) });
      return writeInPieces(res, body);
    case '/chunked': // no length: chunked transfer encoding
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      return writeInPieces(res, body);
    case '/text-chunked':
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      return writeInPieces(res, Buffer.from('é✓'.repeat(size)));
    case '/redirect-with-body': // a followed redirect whose body is large: dropped, its connection closed
      res.on('close', () => {
        if (!res.writableFinished) cutRedirects++;
      });
      res.writeHead(302, { Location: `/sized?size=${url.searchParams.get('then')}`, 'Content-Length': String(size) });
      return writeInPieces(res, body);
    default:
      res.writeHead(404);
      res.end();
  }
}

const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function fetchVia(path: string) {
  const r = await postJson(
    `${gw.url}/tool/call`,
    callBody('http_request', { url: `${origin}${path}` }, { timeout: 20 }),
  );
  expect(r.status).toBe(200);
  const d = r.json.data;
  expect(d.success, d.error).toBe(true);
  return d.data as {
    status: number;
    body: string;
    body_encoding: string;
    bytes: number;
    truncated: boolean;
    redirects: number;
  };
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gw = await startGateway({ config: { tools: { http: { allow_hosts: ['127.0.0.1'], max_response_bytes: CAP } } } });
});
afterAll(async () => {
  await gw?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('http_request body assembly', () => {
  it.each([
    ['with Content-Length', '/sized'],
    ['chunked, without a length', '/chunked'],
  ])('a body in many pieces %s comes back byte for byte', async (_what, path) => {
    for (const size of [0, 1, 701, 9_721, 50_000, CAP]) {
      const d = await fetchVia(`${path}?size=${size}`);
      expect(d.body_encoding).toBe('base64');
      const got = Buffer.from(d.body, 'base64');
      expect(d.bytes).toBe(size);
      expect(got.length).toBe(size);
      expect(digest(got)).toBe(digest(pattern(size)));
      expect(d.truncated).toBe(false);
    }
  });

  it.each(['/sized', '/chunked'])(
    '%s: a body over the cap is cut at exactly max_response_bytes, the kept part intact',
    async (path) => {
      const d = await fetchVia(`${path}?size=${CAP + 40_000}`);
      expect(d.truncated).toBe(true);
      expect(d.bytes).toBe(CAP);
      expect(digest(Buffer.from(d.body, 'base64'))).toBe(digest(pattern(CAP + 40_000).subarray(0, CAP)));
    },
  );

  it('UTF-8 text split mid-character across pieces decodes whole', async () => {
    const d = await fetchVia('/text-chunked?size=5000');
    expect(d.body_encoding).toBe('utf8');
    expect(d.body).toBe('é✓'.repeat(5000));
  });

  it('a followed redirect drops its body (a large one closes its connection); the next hop answers in full', async () => {
    const small = await fetchVia('/redirect-with-body?size=1000&then=20000');
    expect(small).toMatchObject({ status: 200, redirects: 1, bytes: 20_000, truncated: false });
    expect(digest(Buffer.from(small.body, 'base64'))).toBe(digest(pattern(20_000)));
    expect(cutRedirects).toBe(0); // a small redirect body is read to its end (the connection is kept)
    const large = await fetchVia('/redirect-with-body?size=300000&then=30000');
    expect(large).toMatchObject({ status: 200, redirects: 1, bytes: 30_000, truncated: false });
    expect(digest(Buffer.from(large.body, 'base64'))).toBe(digest(pattern(30_000)));
    // The large redirect body was not read to its end: its response was closed unfinished.
    await expect.poll(() => cutRedirects, { timeout: 10_000 }).toBe(1);
  });
});
