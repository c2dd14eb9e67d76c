/**
 * GET /metrics and GET /agents show every tool name, agent card and endpoint
 * of the gateway, whatever a token's allow list says (issue 20, finding 7):
 * with auth they need a token with `admin: true`; without auth they stay open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody } from '../helpers/server.js';
import { post, sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const OPS = 'ops-admin-token-0123456789abcdef01';
const READER = 'reader-admin-token-fedcba98765432';

describe('admin views with auth', () => {
  let gw: SecureGateway;
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: {
        auth: {
          tokens: [
            { name: 'ops', token_sha256: sha256(OPS), admin: true, allow: ['echo'] },
            { name: 'reader', token_sha256: sha256(READER), allow: ['read_*'] },
          ],
        },
        sessions: { required: false },
      },
    });
    // Something for the metrics to show: a call of a tool the reader may not see.
    await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), { Authorization: `Bearer ${OPS}` });
  });
  afterAll(() => gw.close());

  for (const path of ['/metrics', '/agents']) {
    it(`${path}: 401 without a token, 403 for a token without admin, 200 for an admin token`, async () => {
      expect((await fetch(`${gw.url}${path}`)).status).toBe(401);
      const denied = await fetch(`${gw.url}${path}`, { headers: { Authorization: `Bearer ${READER}` } });
      expect(denied.status).toBe(403);
      const body = await denied.json();
      expect(body.code).toBe('forbidden');
      expect(body.message).toBe(
        `GET ${path} shows every tool, agent and endpoint of this gateway, so it needs a token with admin: true ` +
          '(auth.tokens[].admin); token "reader" is not one',
      );
      const ok = await fetch(`${gw.url}${path}`, { headers: { Authorization: `Bearer ${OPS}` } });
      expect(ok.status).toBe(200);
      if (path === '/metrics') expect(await ok.text()).toContain('a2e_tool_calls_total{tool="echo"');
      else expect(await ok.json()).toEqual({ agents: [] });
    });
  }

  it('a config where no token has admin: true lets no token read them', async () => {
    const noAdmin = await startSecureGateway({
      config: { auth: { tokens: [{ name: 'reader', token_sha256: sha256(READER) }] }, sessions: { required: false } },
    });
    try {
      for (const path of ['/metrics', '/agents']) {
        expect(
          (await fetch(`${noAdmin.url}${path}`, { headers: { Authorization: `Bearer ${READER}` } })).status,
          path,
        ).toBe(403);
      }
    } finally {
      await noAdmin.close();
    }
  });
});

describe('admin views without auth', () => {
  it('stay open: there is no token to tell callers apart', async () => {
    const gw = await startSecureGateway();
    try {
      for (const path of ['/metrics', '/agents']) expect((await fetch(`${gw.url}${path}`)).status, path).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
