/** Secure defaults: no open non-loopback bind, DNS-rebinding (Host) and browser-origin (Origin/CORS) protection. */
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, defineConfig } from '../../src/index.js';
import { CLI } from '../helpers/cli.js';
import { openSse } from '../helpers/server.js';
import { callBody } from '../helpers/server.js';
import { LogCapture, post, rawRequest, sha256, startSecureGateway, testTools, type SecureGateway } from './helpers.js';

const TOKEN = 'cors-test-token-5e6f7a8b9c0d1e2f';

describe('binding', () => {
  it('refuses a non-loopback address without auth, saying how to fix it', async () => {
    const log = new LogCapture();
    const gateway = await createGateway({
      config: defineConfig({ server: { port: 0 } }),
      plugins: [testTools()],
      logger: log.logger,
      env: {},
    });
    try {
      await expect(gateway.listen(0, '0.0.0.0')).rejects.toThrow(
        /refusing to listen on 0\.0\.0\.0 without authentication.*auth\.tokens.*server\.allow_insecure: true/,
      );
    } finally {
      await gateway.close();
    }
  });

  it('starts with server.allow_insecure: true, warning at every start', async () => {
    for (let i = 0; i < 2; i++) {
      const gw = await startSecureGateway({ config: { server: { allow_insecure: true } }, host: '0.0.0.0' });
      try {
        expect(gw.log.text).toMatch(/INSECURE: listening on 0\.0\.0\.0 without authentication/);
        expect((await fetch(`http://127.0.0.1:${gw.port}/healthz`)).status).toBe(200);
      } finally {
        await gw.close();
      }
    }
  });

  it('starts on a non-loopback address with auth, and does not restrict Host there', async () => {
    const gw = await startSecureGateway({
      config: { auth: { tokens: [{ name: 'a', token_sha256: sha256(TOKEN) }] } },
      host: '0.0.0.0',
    });
    try {
      const r = await rawRequest(`http://127.0.0.1:${gw.port}`, {
        method: 'GET',
        path: '/healthz',
        headers: { Host: 'gateway.internal.example:8080' },
      });
      expect(r.status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('the CLI exits 2 with the reason on an insecure bind', async () => {
    const r = await execa('node', [CLI, 'serve', '--host', '0.0.0.0', '--port', '0'], {
      reject: false,
      env: { LOG_LEVEL: 'silent' },
      timeout: 20_000,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/refusing to listen on 0\.0\.0\.0 without authentication/);
  });
});

describe('Host header on a loopback bind (DNS rebinding)', () => {
  let gw: SecureGateway;
  beforeAll(async () => {
    gw = await startSecureGateway();
  });
  afterAll(() => gw.close());

  const refused = [
    'evil.example',
    'evil.example:8080',
    'localhost.evil.example',
    '127.0.0.1.nip.io',
    '2130706433',
    '0x7f000001',
    '0177.0.0.1',
    '127.1',
    'evil.example\t',
  ];
  it.each(refused)('refuses Host %j with 403', async (host) => {
    for (const [method, path] of [
      ['POST', '/tool/list'],
      ['GET', '/healthz'],
    ] as const) {
      const r = await rawRequest(gw.url, {
        method,
        path,
        headers: { Host: host, 'Content-Type': 'application/json' },
        body: method === 'POST' ? '{}' : undefined,
      });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(JSON.parse(r.body)).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/Host header/) });
    }
  });

  it.each(['[::ffff:7f00:1]x', '', '127.0.0.1:8080@evil.example'])(
    'malformed Host %j is refused (400 from the HTTP parser)',
    async (host) => {
      const r = await rawRequest(gw.url, {
        path: '/tool/list',
        headers: { Host: host, 'Content-Type': 'application/json' },
        body: '{}',
      }).catch(() => ({ status: 400 }));
      expect(r.status).toBe(400);
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    },
  );

  it.each(['127.0.0.1', 'localhost', 'LOCALHOST', 'app.localhost', '127.0.0.2', '[::1]'])(
    'accepts Host %j (with and without port)',
    async (name) => {
      for (const host of [name, `${name}:${gw.port}`]) {
        const r = await rawRequest(gw.url, {
          path: '/tool/list',
          headers: { Host: host, 'Content-Type': 'application/json' },
          body: '{}',
        });
        expect(r.status, host).toBe(200);
      }
    },
  );
});

describe('server.allowed_hosts', () => {
  it("accepts the listed names (e.g. a reverse proxy's public name) on a loopback bind, and nothing more", async () => {
    const gw = await startSecureGateway({ config: { server: { allowed_hosts: ['Gateway.Example.com'] } } });
    try {
      for (const host of ['gateway.example.com', 'GATEWAY.example.com:443', 'gateway.example.com.']) {
        const r = await rawRequest(gw.url, {
          path: '/tool/list',
          headers: { Host: host, 'Content-Type': 'application/json' },
          body: '{}',
        });
        expect(r.status, host).toBe(200);
      }
      for (const host of ['evil.gateway.example.com', 'gateway.example.com.evil.example', 'example.com']) {
        const r = await rawRequest(gw.url, {
          path: '/tool/list',
          headers: { Host: host, 'Content-Type': 'application/json' },
          body: '{}',
        });
        expect(r.status, host).toBe(403);
        expect(JSON.parse(r.body).message).toMatch(/server\.allowed_hosts/);
      }
    } finally {
      await gw.close();
    }
  });
});

describe('Origin and CORS', () => {
  let gw: SecureGateway;
  const APP = 'https://app.example';
  const auth = { Authorization: `Bearer ${TOKEN}` };
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: {
        server: { cors_origins: [APP, 'http://localhost:5173'] },
        auth: { tokens: [{ name: 'web', token_sha256: sha256(TOKEN) }] },
        sessions: { required: false },
      },
    });
  });
  afterAll(() => gw.close());

  it.each([
    'https://evil.example',
    'null',
    'https://app.example.evil.example',
    'http://app.example',
    'https://app.example:444',
  ])('refuses a browser request from origin %j, before authentication', async (origin) => {
    for (const headers of [{ ...auth, Origin: origin }, { Origin: origin }]) {
      const r = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), headers);
      expect(r.status).toBe(403);
      expect(r.json.code).toBe('forbidden');
      expect(r.json.message).toMatch(/server\.cors_origins/);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
    }
    const pre = await fetch(`${gw.url}/tool/call`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
    });
    expect(pre.status).toBe(403);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a preflight from an allowed origin without needing a token', async () => {
    const r = await fetch(`${gw.url}/tool/call`, {
      method: 'OPTIONS',
      headers: {
        Origin: APP,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type',
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe(APP);
    expect(r.headers.get('access-control-allow-methods')).toContain('POST');
    expect(r.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    expect(r.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
    expect(r.headers.get('vary')).toContain('Origin');
  });

  it('puts CORS headers on JSON answers, errors and 401s for allowed origins', async () => {
    const ok = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), { ...auth, Origin: APP });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP);
    const unknown = await post(`${gw.url}/tool/call`, callBody('nope', {}), { ...auth, Origin: APP });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('access-control-allow-origin')).toBe(APP);
    const unauthorized = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), { Origin: APP });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(APP);
    expect(unauthorized.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
  });

  it('puts CORS headers on SSE streams', async () => {
    const s = await openSse(`${gw.url}/tool/call`, {
      method: 'POST',
      headers: { ...auth, Origin: 'http://localhost:5173', 'Content-Type': 'application/json' },
      body: JSON.stringify(callBody('echo', { text: 'streamed' }, { streaming: true })),
    });
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toContain('text/event-stream');
    expect(s.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const events = await s.rest();
    expect(events.at(-1)?.event).toBe('tool/call/resp');
    expect(events.at(-1)?.json.data.data).toEqual({ text: 'streamed' });
  });

  it('allows same-origin requests (the built-in /docs page) without CORS headers', async () => {
    const r = await post(`${gw.url}/tool/list`, {}, { ...auth, Origin: gw.url });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });
});
