/** Bearer tokens, per-token allow/deny and the policy: one rule for listing, search and calling. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, defineConfig, createLogger } from '../../src/index.js';
import { callBody } from '../helpers/server.js';
import { post, sha256, startSecureGateway, testTools, type SecureGateway } from './helpers.js';

const ADMIN = 'admin-token-7f3a9c1e5b2d4f6a8c0e';
const READER = 'reader-token-0b1c2d3e4f5a6b7c8d9e';
const NOSHELL = 'noshell-token-99aa88bb77cc66dd55ee';

const names = (r: { json: { tools: { name: string }[] } }) => r.json.tools.map((t) => t.name).sort();

async function session(url: string, token: string): Promise<string> {
  const r = await post(`${url}/handshake`, { agent_caps: ['tools'] }, { Authorization: `Bearer ${token}` });
  expect(r.json.ok).toBe(true);
  return r.json.session_id as string;
}

describe('bearer authentication', () => {
  let gw: SecureGateway;
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: {
        auth: {
          tokens: [
            // admin: true lets it read /metrics and /agents (issue 20); the other tokens may not.
            { name: 'admin', token_env: 'ADMIN_TOKEN', admin: true },
            { name: 'reader', token_sha256: sha256(READER), allow: ['read_*', 'echo'] },
            { name: 'noshell', token_sha256: sha256(NOSHELL).toUpperCase(), deny: ['kind:shell', 'tag:write'] },
          ],
        },
        sessions: { required: false },
      },
      env: { ADMIN_TOKEN: ADMIN },
    });
  });
  afterAll(() => gw.close());

  it('answers 401 with WWW-Authenticate on every protected route without a valid token', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { Authorization: 'Bearer nope' },
      { Authorization: `Basic ${ADMIN}` },
      { Authorization: `Bearer ${ADMIN}x` },
    ]) {
      for (const path of ['/tool/list', '/tool/call', '/no/such/route']) {
        const r = await post(`${gw.url}${path}`, callBody('echo', { text: 'x' }), headers);
        expect(r.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(r.headers.get('www-authenticate')).toBe('Bearer realm="a2e-gateway"');
        expect(r.json.code).toBe('unauthorized');
      }
    }
  });

  it('accepts tokens from token_env and token_sha256 (hex in any case)', async () => {
    for (const token of [ADMIN, READER, NOSHELL]) {
      const r = await post(`${gw.url}/tool/list`, {}, { Authorization: `Bearer ${token}` });
      expect(r.status).toBe(200);
    }
  });

  it('leaves health and docs open, and keeps metrics and agents behind the token', async () => {
    for (const path of ['/healthz', '/openapi.json', '/docs'])
      expect((await fetch(`${gw.url}${path}`)).status).toBe(200);
    for (const path of ['/metrics', '/agents']) {
      expect((await fetch(`${gw.url}${path}`)).status, path).toBe(401);
      expect((await fetch(`${gw.url}${path}`, { headers: { Authorization: `Bearer ${ADMIN}` } })).status, path).toBe(
        200,
      );
    }
  });

  it('never writes a token into the log, even at debug level', async () => {
    await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), { Authorization: `Bearer ${ADMIN}` });
    await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), { Authorization: `Bearer ${READER}-wrong` });
    await post(`${gw.url}/handshake`, { auth_token: `${NOSHELL}-wrong` });
    expect(gw.log.text).toMatch(/request refused: the bearer token is not valid/);
    for (const secret of [ADMIN, READER, NOSHELL]) expect(gw.log.text).not.toContain(secret);
  });

  it("applies a token's allow list to listing, search and calling alike", async () => {
    const h = { Authorization: `Bearer ${READER}` };
    expect(names(await post(`${gw.url}/tool/list`, {}, h))).toEqual(['echo', 'read_notes']);
    expect(names(await post(`${gw.url}/tool/list`, { query: 'notes write' }, h))).toEqual(['read_notes']);
    const denied = await post(`${gw.url}/tool/call`, callBody('write_notes', {}), h);
    expect(denied.status).toBe(403);
    expect(denied.json.code).toBe('tool_denied');
    expect(denied.json.message).toMatch(/token "reader"/);
    expect((await post(`${gw.url}/tool/call`, callBody('read_notes', {}), h)).json.data.success).toBe(true);
  });

  it("applies a token's deny list (kind: and tag: rules) to listing and calling", async () => {
    const h = { Authorization: `Bearer ${NOSHELL}` };
    expect(names(await post(`${gw.url}/tool/list`, {}, h))).toEqual(['args', 'echo', 'hold', 'read_notes']);
    expect(names(await post(`${gw.url}/tool/list`, { query: 'run command' }, h))).not.toContain('run_cmd');
    for (const tool of ['run_cmd', 'write_notes']) {
      const r = await post(`${gw.url}/tool/call`, callBody(tool, {}), h);
      expect(r.status).toBe(403);
      expect(r.json.code).toBe('tool_denied');
    }
    // The admin token sees everything.
    expect(names(await post(`${gw.url}/tool/list`, {}, { Authorization: `Bearer ${ADMIN}` }))).toHaveLength(6);
  });

  it('decides on the exact canonical name: case and invisible-character variants are unknown, and suggest only allowed tools', async () => {
    const h = { Authorization: `Bearer ${READER}` };
    for (const name of [
      'WRITE_NOTES',
      'write_notes\u200b',
      '\u200bwrite_notes',
      'write_notes ',
      'wrіte_notes' /* Cyrillic і */,
    ]) {
      const r = await post(`${gw.url}/tool/call`, callBody(name, {}), h);
      expect(r.status, JSON.stringify(name)).toBe(404);
      expect(r.json.code).toBe('unknown_tool');
      expect(r.json.message).not.toMatch(/Did you mean "write_notes"/);
    }
    const upper = await post(`${gw.url}/tool/call`, callBody('READ_NOTES', {}), h);
    expect(upper.status).toBe(404);
    expect(upper.json.message).toMatch(/Did you mean "read_notes"/);
  });

  it('binds a session to the token that opened it', async () => {
    const s = await session(gw.url, READER);
    const r = await post(`${gw.url}/tool/list`, { session_id: s }, { Authorization: `Bearer ${ADMIN}` });
    expect(r.status).toBe(401);
  });
});

describe('policy', () => {
  let gw: SecureGateway;
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: { policy: { allow: ['*_notes', 'echo', 'kind:shell', 'args'], deny: ['write_*', 'tag:nothing'] } },
    });
  });
  afterAll(() => gw.close());

  it('lists only allowed tools, deny winning over allow, with the same rule for calls', async () => {
    const listed = names(await post(`${gw.url}/tool/list`, {}));
    expect(listed).toEqual(['args', 'echo', 'read_notes', 'run_cmd']);
    for (const tool of ['write_notes', 'hold']) {
      expect(
        names(await post(`${gw.url}/tool/list`, { query: tool.replace('_', ' '), include_deferred: true })),
      ).not.toContain(tool);
      const r = await post(`${gw.url}/tool/call`, callBody(tool, { ms: 1 }));
      expect(r.status).toBe(403);
      expect(r.json.code).toBe('tool_denied');
      expect(r.json.message).toMatch(/policy/);
    }
    expect((await post(`${gw.url}/tool/call`, callBody('run_cmd', {}))).json.data.success).toBe(true);
  });

  it('allows all tools by default', async () => {
    const open = await startSecureGateway();
    try {
      expect(names(await post(`${open.url}/tool/list`, {}))).toHaveLength(6);
    } finally {
      await open.close();
    }
  });
});

describe('auth configuration', () => {
  it('rejects a token with both or neither of token_env and token_sha256', () => {
    expect(() =>
      defineConfig({ auth: { tokens: [{ name: 'a', token_env: 'X', token_sha256: sha256('x') }] } }),
    ).toThrow(/exactly one of token_env or token_sha256/);
    expect(() => defineConfig({ auth: { tokens: [{ name: 'a' }] } })).toThrow(
      /exactly one of token_env or token_sha256/,
    );
    expect(() => defineConfig({ auth: { tokens: [{ name: 'a', token_sha256: 'abc' }] } })).toThrow(/64 hex digits/);
    expect(() => defineConfig({ auth: { tokens: [] } })).toThrow(/at least one token/);
  });

  it('refuses to start when a token_env variable is unset, naming the token and the variable', async () => {
    const config = defineConfig({ auth: { tokens: [{ name: 'ci', token_env: 'CI_GATEWAY_TOKEN' }] } });
    await expect(
      createGateway({ config, plugins: [testTools()], logger: createLogger('silent'), env: {} }),
    ).rejects.toThrow(/auth.tokens "ci": environment variable CI_GATEWAY_TOKEN is not set/);
  });
});

describe('under server.base_path', () => {
  it('keeps health and docs open, and the handshake and tools behind the token', async () => {
    const TOKEN = 'base-path-token-00112233445566778899';
    const gw = await startSecureGateway({
      config: { server: { base_path: '/a2e' }, auth: { tokens: [{ name: 'p', token_sha256: sha256(TOKEN) }] } },
    });
    try {
      expect(gw.url).toMatch(/\/a2e$/);
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${gw.url}/openapi.json`)).status).toBe(200);
      expect((await post(`${gw.url}/tool/list`, {})).status).toBe(401);
      const hs = await post(`${gw.url}/handshake`, { agent_caps: ['tools'], auth_token: TOKEN });
      expect(hs.json.ok).toBe(true);
      const list = await post(
        `${gw.url}/tool/list`,
        { session_id: hs.json.session_id },
        { Authorization: `Bearer ${TOKEN}` },
      );
      expect(list.status).toBe(200);
      expect(list.json.tools.length).toBeGreaterThan(0);
    } finally {
      await gw.close();
    }
  });
});
