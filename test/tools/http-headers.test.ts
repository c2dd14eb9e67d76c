/**
 * http_request's response headers, flattened from the raw header list as the
 * connection delivers it: names lower-cased, a repeated header joined with
 * ", " at the place it was first seen, names Object.prototype has kept as the
 * response's own; an informational (1xx) answer before the real one does not
 * leak its headers or status; a redirect with two Location headers is not
 * followed (it is the answer). Against a real server on 127.0.0.1 writing
 * raw header lists (names in any case, repeated).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

let server: Server;
let origin: string;
let gw: TestGateway;
let followed = 0;

function handle(req: IncomingMessage, res: ServerResponse): void {
  switch (req.url) {
    case '/repeated':
      // A raw list: as written, in this order, names in mixed case.
      res.writeHead(200, [
        'Content-Type',
        'text/plain',
        'X-Multi',
        'one',
        'Set-Cookie',
        'a=1',
        'x-other',
        'solo',
        'x-MULTI',
        'two',
        'set-cookie',
        'b=2',
        'Constructor',
        'mine',
        'X-Multi',
        'three',
      ]); // prettier-ignore
      res.end('ok');
      return;
    case '/early-hints':
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style', 'x-early': 'hint' }, () => {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Final': 'yes' });
        res.end('final');
      });
      return;
    case '/two-locations':
      res.writeHead(302, ['Location', '/landing', 'Location', '/elsewhere', 'Content-Type', 'text/plain']);
      res.end('pick one');
      return;
    case '/landing':
    case '/elsewhere':
      followed++;
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('landed');
      return;
    default:
      res.writeHead(404);
      res.end();
  }
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gw = await startGateway({ config: { tools: { http: { allow_hosts: ['127.0.0.1'] } } } });
});
afterAll(async () => {
  await gw?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = async (path: string) => {
  const r = await postJson(
    `${gw.url}/tool/call`,
    callBody('http_request', { url: `${origin}${path}` }, { timeout: 10 }),
  );
  expect(r.status).toBe(200);
  expect(r.json.data.success).toBe(true);
  return r.json.data.data as {
    status: number;
    headers: Record<string, string>;
    body: string;
    redirects: number;
    url: string;
  };
};

describe('http_request: response headers', () => {
  it('lower-cases names and joins a repeated header with ", " where it was first seen', async () => {
    const d = await get('/repeated');
    const own = Object.entries(d.headers).filter(
      ([name]) => !['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name),
    );
    expect(own).toEqual([
      ['content-type', 'text/plain'],
      ['x-multi', 'one, two, three'],
      ['set-cookie', 'a=1, b=2'],
      ['x-other', 'solo'],
      ['constructor', 'mine'],
    ]);
    expect(d.body).toBe('ok');
  });

  it('answers the final response after a 103 Early Hints, without the hints’ headers', async () => {
    const d = await get('/early-hints');
    expect(d.status).toBe(200);
    expect(d.headers['x-final']).toBe('yes');
    expect(d.headers['x-early']).toBeUndefined();
    expect(d.headers.link).toBeUndefined();
    expect(d.body).toBe('final');
  });

  it('does not follow a redirect with two Location headers: the redirect is the answer', async () => {
    const before = followed;
    const d = await get('/two-locations');
    expect(d.status).toBe(302);
    expect(d.redirects).toBe(0);
    expect(d.url).toBe(`${origin}/two-locations`);
    expect(d.headers.location).toBe('/landing, /elsewhere');
    expect(d.body).toBe('pick one');
    expect(followed).toBe(before);
  });
});
