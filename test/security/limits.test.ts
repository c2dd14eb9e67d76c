/** Limits over real HTTP: body size, nesting, strings, arrays, rate, concurrency, slow clients, UTF-8, prototype keys. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { callBody } from '../helpers/server.js';
import { post, releaseHeld, sha256, slowClient, startSecureGateway, type SecureGateway } from './helpers.js';

const A = 'limits-token-a-0123456789abcdef';
const B = 'limits-token-b-fedcba9876543210';

const healthy = async (url: string) => expect((await fetch(`${url}/healthz`)).status).toBe(200);

describe('request shape limits', () => {
  let gw: SecureGateway;
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: {
        server: { body_limit_bytes: 4 * 1024 * 1024 },
        limits: { max_json_depth: 16, max_string_length: 1000, max_array_items: 50 },
      },
    });
  });
  afterAll(() => gw.close());

  it('refuses a body over server.body_limit_bytes with 413, declared or chunked', async () => {
    const small = await startSecureGateway({ config: { server: { body_limit_bytes: 1024 } } });
    try {
      const body = JSON.stringify(callBody('echo', { text: 'x'.repeat(2000) }));
      const declared = await post(`${small.url}/tool/call`, body);
      expect(declared.status).toBe(413);
      expect(declared.json.code).toBe('payload_too_large');
      const chunked = await fetch(`${small.url}/tool/call`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: new Blob([body]).stream(),
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status).toBe(413);
      await healthy(small.url);
    } finally {
      await small.close();
    }
  });

  it('refuses nesting deeper than limits.max_json_depth with 400, even a million levels', async () => {
    const nested = (n: number) => `{"tool_name":"args","arguments":{"meta":{"a":${'['.repeat(n)}${']'.repeat(n)}}}}`;
    const ok = await post(`${gw.url}/tool/call`, nested(10));
    expect(ok.status).toBe(200);
    for (const n of [14, 1_000_000]) {
      const r = await post(`${gw.url}/tool/call`, nested(n));
      expect(r.status, String(n)).toBe(400);
      expect(r.json.code).toBe('invalid_request');
      expect(r.json.message).toMatch(/deeper than 16 levels \(limits\.max_json_depth\)/);
    }
    // POST /tool/calls reads its body with the same limit (it used to pre-scan at 64 whatever the config said).
    const accepted = await post(`${gw.url}/tool/calls`, nested(10));
    expect(accepted.status).toBe(202);
    const deep = await post(`${gw.url}/tool/calls`, nested(20));
    expect(deep.status).toBe(400);
    expect(deep.json.message).toMatch(/deeper than 16 levels \(limits\.max_json_depth\)/);
    // Brackets inside strings are text, not nesting.
    const inString = await post(`${gw.url}/tool/call`, callBody('args', { text: '[{'.repeat(400).slice(0, 800) }));
    expect(inString.status).toBe(200);
    await healthy(gw.url);
  });

  it("reads every other door's JSON with the same limits.max_json_depth: the A2E transport, MCP, A2A", async () => {
    // 20 levels: within the default (64), beyond the configured 16; so a refusal shows the configured limit applied.
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const message = (id: string, n: number) =>
      `{"type":"tool/call/req","id":"${id}","tool_name":"args","arguments":{"meta":{"a":${deep(n)}}}}`;
    const { client } = await A2eTestClient.connect(`${gw.url}/a2e/v1`);
    try {
      expect((await client.send(message('shallow', 10))).status).toBe(202);
      expect((await client.waitFor((m) => m.req_id === 'shallow' && m.type === 'tool/call/resp')).data).toMatchObject({
        success: true,
      });
      for (const n of [20, 1_000_000]) {
        const before = client.received.length;
        expect((await client.send(message(`deep-${n}`, n))).status).toBe(202);
        // Refused by the message reader before parsing, so the message's id is not known to echo.
        const refused = await client.waitFor((m) => m.type === 'error' && client.received.indexOf(m) >= before);
        expect(refused.code, String(n)).toBe('invalid_request');
        expect(refused.message).toMatch(
          /the message nests arrays\/objects deeper than 16 levels \(limits\.max_json_depth\)/,
        );
      }
      expect((await client.request({ type: 'ping' })).response.type).toBe('pong');
    } finally {
      await client.dropStream();
    }

    const rpc = (path: string, body: string) =>
      fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body,
      });
    const mcp = await rpc(
      '/mcp',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"args","arguments":{"meta":{"a":${deep(20)}}}}}`,
    );
    expect(mcp.status).toBe(400);
    expect(JSON.stringify(await mcp.json())).toMatch(/deeper than 16 levels \(limits\.max_json_depth\)/);
    const a2a = await rpc(
      '/a2a',
      `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"parts":[{"kind":"data","data":${deep(20)}}]}}}`,
    );
    expect(JSON.stringify(await a2a.json())).toMatch(/deeper than 16 levels \(limits\.max_json_depth\)/);
    await healthy(gw.url);
  });

  it('refuses strings over limits.max_string_length and arrays over limits.max_array_items with 422 and the path', async () => {
    const long = await post(`${gw.url}/tool/call`, callBody('args', { meta: { deep: ['x'.repeat(1001)] } }));
    expect(long.status).toBe(422);
    expect(long.json.code).toBe('invalid_arguments');
    expect(long.json.detail.problems[0].path).toBe('arguments.meta.deep.0');
    expect(long.json.message).toMatch(/limits\.max_string_length/);
    const key = await post(`${gw.url}/tool/call`, callBody('args', { meta: { ['k'.repeat(1001)]: 1 } }));
    expect(key.status).toBe(422);
    const big = await post(`${gw.url}/tool/call`, callBody('args', { list: Array.from({ length: 51 }, (_, i) => i) }));
    expect(big.status).toBe(422);
    expect(big.json.detail.problems[0]).toMatchObject({
      path: 'arguments.list',
      message: expect.stringMatching(/limits\.max_array_items/),
    });
    const fits = await post(
      `${gw.url}/tool/call`,
      callBody('args', { list: Array.from({ length: 50 }, (_, i) => i), text: 'x'.repeat(1000) }),
    );
    expect(fits.status).toBe(200);
  });

  it('answers invalid UTF-8 with 400 and keeps serving', async () => {
    const head = Buffer.from('{"tool_name":"echo","arguments":{"text":"');
    const tail = Buffer.from('"}}');
    for (const bad of [
      [0xff],
      [0xc3, 0x28],
      [0xed, 0xa0, 0x80] /* surrogate */,
      [0xf8, 0x88, 0x80, 0x80, 0x80],
      [0xc0, 0xaf] /* overlong / */,
    ]) {
      const r = await post(`${gw.url}/tool/call`, new Uint8Array(Buffer.concat([head, Buffer.from(bad), tail])));
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.json.message).toMatch(/not valid UTF-8/);
    }
    const good = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'héllo ✓ 𝄞' }));
    expect(good.json.data.data.text).toBe('héllo ✓ 𝄞');
  });

  it('does not let __proto__, constructor or prototype keys change any prototype', async () => {
    const body =
      '{"tool_name":"args","arguments":{"__proto__":{"polluted":"yes"},"meta":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}}}';
    const r = await post(`${gw.url}/tool/call`, body);
    expect(r.status).toBe(200);
    expect(r.json.data.data).toEqual({ keys: ['meta'], plainPrototype: true, metaPrototype: true, polluted: null });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // A declared argument cannot be smuggled in through the prototype either.
    const smuggled = await post(
      `${gw.url}/tool/call`,
      '{"tool_name":"echo","arguments":{"__proto__":{"text":"from proto"}}}',
    );
    expect(smuggled.status).toBe(422);
    expect(smuggled.json.detail.problems[0].path).toBe('arguments.text');
    const topLevel = await post(`${gw.url}/tool/call`, '{"__proto__":{"tool_name":"echo"},"arguments":{"text":"x"}}');
    expect(topLevel.status).toBe(400);
    expect(topLevel.json.detail.problems.map((p: { path: string }) => p.path)).toContain('tool_name');
  });
});

describe('rate and concurrency limits', () => {
  let gw: SecureGateway;
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: {
        auth: {
          tokens: [
            { name: 'a', token_sha256: sha256(A) },
            { name: 'b', token_sha256: sha256(B) },
          ],
        },
        sessions: { required: false },
        limits: { rate_per_s: 0.5, rate_burst: 3, max_concurrent_calls: 2 },
      },
    });
  });
  afterAll(() => gw.close());

  it('limits each token to its burst, with 429 and Retry-After, without affecting other tokens', async () => {
    const h = { Authorization: `Bearer ${A}` };
    for (let i = 0; i < 3; i++)
      expect((await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), h)).status).toBe(200);
    const limited = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), h);
    expect(limited.status).toBe(429);
    expect(limited.json.code).toBe('rate_limited');
    expect(limited.json.retryable).toBe(true);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.json.message).toMatch(/token "a"/);
    expect(
      (await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), { Authorization: `Bearer ${B}` })).status,
    ).toBe(200);
  });

  it('caps calls running at once across the gateway with 503 and Retry-After', async () => {
    const capped = await startSecureGateway({ config: { limits: { max_concurrent_calls: 2 } } });
    try {
      const running = [1, 2].map(() => post(`${capped.url}/tool/call`, callBody('hold', { ms: 20_000 })));
      await expect.poll(() => capped.gateway.engine.running, { timeout: 10_000 }).toBe(2);
      const r = await post(`${capped.url}/tool/call`, callBody('echo', { text: 'x' }));
      expect(r.status).toBe(503);
      expect(r.json.code).toBe('unavailable');
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.json.message).toMatch(/limits\.max_concurrent_calls/);
      releaseHeld();
      for (const done of await Promise.all(running)) expect(done.json.data.success).toBe(true);
      expect(capped.gateway.engine.running).toBe(0);
      expect((await post(`${capped.url}/tool/call`, callBody('echo', { text: 'x' }))).status).toBe(200);
    } finally {
      await capped.close();
    }
  });
});

describe('slow clients', () => {
  let gw: SecureGateway;
  beforeAll(async () => {
    gw = await startSecureGateway({ config: { server: { headers_timeout_s: 1, request_timeout_s: 2 } } });
  });
  afterAll(() => gw.close());

  it('drops a client that never finishes its headers (slowloris), within the timeout', async () => {
    const { socket, closed } = slowClient(gw.url, 'POST /tool/list HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    const timer = setInterval(() => socket.write('a'), 200); // drip one byte at a time
    const { ms, received } = await closed;
    clearInterval(timer);
    expect(ms).toBeLessThan(8_000);
    expect(received).toMatch(/^$|^HTTP\/1\.1 408/);
    await healthy(gw.url);
  });

  it('drops a client whose body never arrives, within the timeout, and no call starts', async () => {
    const head =
      'POST /tool/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"tool_name":';
    const { socket, closed } = slowClient(gw.url, head);
    const timer = setInterval(() => socket.write(' '), 300);
    const { ms, received } = await closed;
    clearInterval(timer);
    expect(ms).toBeLessThan(10_000);
    expect(received).toMatch(/^$|^HTTP\/1\.1 408/);
    expect(gw.gateway.engine.running).toBe(0);
    await healthy(gw.url);
  });

  it('does not cut a call that runs longer than request_timeout_s once its request has arrived', async () => {
    const started = performance.now();
    const r = await post(`${gw.url}/tool/call`, callBody('hold', { ms: 3_500 }));
    expect(r.status).toBe(200);
    expect(r.json.data.success).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(3_000);
  });
});
