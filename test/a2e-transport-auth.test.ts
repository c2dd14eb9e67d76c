/**
 * The A2E transport behind the gateway's bearer-token auth: the token
 * travels in the handshake (auth_token), as the reference SDK sends it, and
 * is checked like a bearer token; per-token rules apply to transport
 * callers as to REST ones.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2eTestClient } from './helpers/a2e-client.js';
import { definePlugin, echoTool } from './helpers/plugins.js';
import { startGateway, type TestGateway } from './helpers/server.js';

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
    config: { auth: { tokens: [{ name: 'agent-1', token_sha256: sha256('s3cret-token'), deny: ['forbidden_tool'] }] } },
  });
  base = `${gw.url}/a2e/v1`;
});
afterAll(() => gw.close());

describe('A2E transport with auth configured', () => {
  it('a wrong or missing auth_token: ok:false with a reason; tool messages need a good handshake', async () => {
    const { client, handshake } = await A2eTestClient.connect(base, { auth_token: 'wrong' });
    expect(handshake.response).toMatchObject({ type: 'handshake/resp', ok: false, session_id: '', accepted_caps: [] });
    expect(handshake.response.reason).toContain('not valid');
    const none = await client.request({ type: 'handshake/req', agent_caps: ['tools'] });
    expect(none.response).toMatchObject({ ok: false });
    expect(none.response.reason).toContain('requires a token');
    for (const type of ['tool/list/req', 'tool/call/req']) {
      const { response } = await client.request({ type, tool_name: 'echo', arguments: { text: 'x' } });
      expect(response).toMatchObject({ type: 'error', code: 'unauthorized', capability_name: 'tools' });
    }
    await client.dropStream();
  });

  it('the right auth_token opens the session, without any Authorization header; token rules apply', async () => {
    const { client, handshake } = await A2eTestClient.connect(base, { auth_token: 's3cret-token' });
    expect(handshake.response).toMatchObject({ ok: true, accepted_caps: [{ capability: 'tools', enabled: true, metadata: {} }] });
    expect(Number.isInteger(handshake.response.max_parallel)).toBe(true);
    const list = await client.request({ type: 'tool/list/req' });
    expect(list.response.tools.map((t: { name: string }) => t.name)).toEqual(['echo']);
    const denied = await client.request({ type: 'tool/call/req', tool_name: 'forbidden_tool', arguments: {} });
    expect(denied.response).toMatchObject({ type: 'error', code: 'tool_denied', capability_name: 'tools' });
    const ok = await client.request({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' }, streaming: true });
    expect(ok.response.data).toMatchObject({ success: true, data: { text: 'hi' } });
    await client.dropStream();
  });

  it('the REST routes still want a bearer token; the transport still checks Host', async () => {
    const rest = await fetch(`${gw.url}/tool/list`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(rest.status).toBe(401);
    const { port } = new URL(gw.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/a2e/v1/session', headers: { Host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});
