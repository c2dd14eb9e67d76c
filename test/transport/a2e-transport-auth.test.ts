/**
 * The A2E transport behind the gateway's bearer-token auth: like every other
 * door it wants `Authorization: Bearer` on every request (POST /session,
 * /send, /stream); the session belongs to that token, a handshake's
 * auth_token may only name it again, and per-token rules apply to transport
 * callers as to REST ones.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const tools = definePlugin('transport-auth-test', [
  echoTool,
  [{ name: 'forbidden_tool', description: 'Denied to the test token' }, () => ({ ran: true })],
]);

let gw: TestGateway;
let base: string;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [tools],
    config: {
      auth: {
        tokens: [
          { name: 'agent-1', token_sha256: sha256('s3cret-token'), deny: ['forbidden_tool'] },
          { name: 'agent-2', token_sha256: sha256('other-token') },
        ],
      },
    },
  });
  base = `${gw.url}/a2e/v1`;
});
afterAll(() => gw.close());

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('A2E transport with auth configured', () => {
  it('no or a wrong bearer token: 401 with WWW-Authenticate on every transport route', async () => {
    for (const headers of [{}, bearer('wrong')]) {
      const open = await fetch(`${base}/session`, { method: 'POST', headers });
      expect(open.status).toBe(401);
      expect(open.headers.get('www-authenticate')).toBe('Bearer realm="a2e-gateway"');
    }
    const client = await A2eTestClient.open(base, bearer('s3cret-token'));
    for (const headers of [{}, bearer('wrong')]) {
      const send = await client.send({ type: 'ping' }, { ...headers, 'X-Session-Id': client.sessionId });
      expect(send.status).toBe(401);
      const stream = await fetch(`${base}/stream`, { headers: { ...headers, 'X-Session-Id': client.sessionId } });
      expect(stream.status).toBe(401);
      await stream.body?.cancel();
    }
  });

  it('the bearer token opens the session; a handshake auth_token must be that token; token rules apply', async () => {
    const { client, handshake } = await A2eTestClient.connect(base, { auth_token: 'wrong' }, bearer('s3cret-token'));
    expect(handshake.response).toMatchObject({ type: 'handshake/resp', ok: false, session_id: '', accepted_caps: [] });
    expect(handshake.response.reason).toContain('not valid');
    const other = await client.request({ type: 'handshake/req', agent_caps: ['tools'], auth_token: 'other-token' });
    expect(other.response).toMatchObject({ ok: false });
    expect(other.response.reason).toContain('another token than the one this session belongs to');
    // No auth_token: the session's own token; the same token sent again is fine too.
    for (const auth_token of ['', 's3cret-token']) {
      const hs = await client.request({ type: 'handshake/req', agent_caps: ['tools'], auth_token });
      expect(hs.response).toMatchObject({
        ok: true,
        accepted_caps: [{ capability: 'tools', enabled: true, metadata: {} }],
      });
      expect(Number.isInteger(hs.response.max_parallel)).toBe(true);
    }
    const list = await client.request({ type: 'tool/list/req' });
    expect(list.response.tools.map((t: { name: string }) => t.name)).toEqual(['echo']);
    const denied = await client.request({ type: 'tool/call/req', tool_name: 'forbidden_tool', arguments: {} });
    expect(denied.response).toMatchObject({ type: 'error', code: 'tool_denied', capability_name: 'tools' });
    const ok = await client.request({
      type: 'tool/call/req',
      tool_name: 'echo',
      arguments: { text: 'hi' },
      streaming: true,
    });
    expect(ok.response.data).toMatchObject({ success: true, data: { text: 'hi' } });
    await client.dropStream();
  });

  it('the REST routes still want a bearer token; the transport still checks Host', async () => {
    const rest = await fetch(`${gw.url}/tool/list`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(rest.status).toBe(401);
    const { port } = new URL(gw.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, method: 'POST', path: '/a2e/v1/session', headers: { Host: 'evil.example' } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});
