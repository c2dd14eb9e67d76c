/**
 * What a caller can learn about things it may not see (issue 20, finding 7):
 * the call-events route answers alike for a call that does not exist and
 * one the request may not read, and `policy.hide_denied` makes a tool the
 * caller cannot list answer exactly like a tool that does not exist.
 * Each pair of answers is compared whole (status, code, message).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody } from '../helpers/server.js';
import { post, releaseHeld, sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const ALICE = 'alice-enum-token-0123456789abcdef';
const BOB = 'bob-enum-token-fedcba9876543210ab';
const alice = { Authorization: `Bearer ${ALICE}` };
const bob = { Authorization: `Bearer ${BOB}` };

async function answer(url: string, headers: Record<string, string>, id: string, knownId: string) {
  const r = await fetch(url, { headers });
  const text = await r.text();
  // The message id and timestamp differ per answer by nature; everything else must match.
  const { id: _id, ts: _ts, ...rest } = JSON.parse(text.replaceAll(id, '<id>').replaceAll(knownId, '<id>'));
  return { status: r.status, headers: { 'www-authenticate': r.headers.get('www-authenticate') }, body: rest };
}

describe('the call-events route does not tell whether a call id exists', () => {
  let gw: SecureGateway;
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: {
        auth: {
          tokens: [
            { name: 'alice', token_sha256: sha256(ALICE) },
            { name: 'bob', token_sha256: sha256(BOB) },
          ],
        },
        sessions: { required: false },
      },
    });
  });
  afterAll(async () => {
    releaseHeld();
    await gw.close();
  });

  it('answers an existing call and an unknown id the same for every credential that may not read it', async () => {
    const started = (await post(`${gw.url}/tool/calls`, callBody('hold', { ms: 20_000 }), alice)).json;
    expect(started.call_id).toBeTruthy();
    const other = (await post(`${gw.url}/tool/calls`, callBody('echo', { text: 'x' }), alice)).json;
    const otherToken = new URL(other.events_url).searchParams.get('access_token')!;
    const unknownId = started.call_id.replace(/.{6}$/, 'zzzzzz');
    const base = (id: string) => `${gw.url}/tool/calls/${id}/events`;
    const attempts: [string, (id: string) => string, Record<string, string>][] = [
      ['no credential', base, {}],
      ['a forged access_token', (id) => `${base(id)}?access_token=${'A'.repeat(43)}`, {}],
      ['an empty access_token', (id) => `${base(id)}?access_token=`, {}],
      ["another call's access_token", (id) => `${base(id)}?access_token=${otherToken}`, {}],
      ["another token's bearer", base, bob],
      ["another token's bearer and a forged access_token", (id) => `${base(id)}?access_token=${'B'.repeat(43)}`, bob],
      ['an invalid bearer token', base, { Authorization: 'Bearer not-a-token' }],
    ];
    const statuses = new Set<number>();
    for (const [what, url, headers] of attempts) {
      const existing = await answer(url(started.call_id), headers, started.call_id, started.call_id);
      const missing = await answer(url(unknownId), headers, unknownId, started.call_id);
      expect(existing.status, what).not.toBe(200);
      expect(missing, what).toEqual(existing);
      statuses.add(existing.status);
    }
    // The answer depends on the credential only: none valid → 401, another token → 404.
    expect([...statuses].sort()).toEqual([401, 404]);
    // The owner is not affected: the bearer token or the events_url's token reads the stream.
    const owner = await fetch(base(started.call_id), { headers: alice, signal: AbortSignal.timeout(10_000) });
    expect(owner.status).toBe(200);
    await owner.body?.cancel();
    const byUrl = await fetch(started.events_url, { signal: AbortSignal.timeout(10_000) });
    expect(byUrl.status).toBe(200);
    await byUrl.body?.cancel();
    // And an unknown id with the owner's token is a plain 404.
    expect((await fetch(base(unknownId), { headers: alice })).status).toBe(404);
  });
});

const READER = 'reader-enum-token-0b1c2d3e4f5a6b7c8d9e';
const reader = { Authorization: `Bearer ${READER}` };

describe('policy.hide_denied', () => {
  let gw: SecureGateway;
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: {
        auth: { tokens: [{ name: 'reader', token_sha256: sha256(READER), allow: ['read_*', 'echo', 'args', 'hold'] }] },
        sessions: { required: false },
        policy: { deny: ['run_cmd'], hide_denied: true },
      },
    });
  });
  afterAll(() => gw.close());

  const refusal = async (
    tool: string,
    headers: Record<string, string> = reader,
    extra: Record<string, unknown> = {},
  ) => {
    const r = await post(`${gw.url}/tool/call`, callBody(tool, {}, extra), headers);
    return {
      status: r.status,
      code: r.json.code,
      message: String(r.json.message).replaceAll(tool, '<name>'),
      detail: r.json.detail,
    };
  };

  it('answers a tool hidden by the token or by the policy exactly like one that does not exist', async () => {
    const missing = await refusal('no_such_tool');
    expect(missing).toMatchObject({ status: 404, code: 'unknown_tool' });
    for (const hidden of ['write_notes' /* token allow list */, 'run_cmd' /* policy.deny */]) {
      const r = await refusal(hidden);
      expect(r, hidden).toEqual({ ...missing, detail: { tool_name: hidden } });
    }
    // The same over call resources.
    const viaResource = await post(`${gw.url}/tool/calls`, callBody('write_notes', {}), reader);
    expect(viaResource.status).toBe(404);
    expect(viaResource.json.code).toBe('unknown_tool');
  });

  it('never names a hidden tool in "did you mean", and still suggests visible ones', async () => {
    const near = await post(`${gw.url}/tool/call`, callBody('WRITE_NOTES', {}), reader);
    expect(near.json.code).toBe('unknown_tool');
    expect(near.json.message).not.toContain('write_notes');
    const visible = await post(`${gw.url}/tool/call`, callBody('READ_NOTES', {}), reader);
    expect(visible.json.message).toContain('Did you mean "read_notes"?');
  });

  it('a session without the "tools" capability cannot tell hidden tools from missing ones either', async () => {
    const session = (await post(`${gw.url}/handshake`, { agent_caps: [] }, reader)).json.session_id as string;
    expect(session).toBeTruthy();
    const missing = await refusal('no_such_tool', reader, { session_id: session });
    expect(missing.code).toBe('unknown_tool');
    expect(await refusal('write_notes', reader, { session_id: session })).toEqual({
      ...missing,
      detail: { tool_name: 'write_notes' },
    });
    // A tool it could list with "tools" is refused as before, saying why.
    const allowed = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }, { session_id: session }), reader);
    expect(allowed.status).toBe(403);
    expect(allowed.json.code).toBe('tool_denied');
  });

  it('lists and searches only visible tools, and visible tools still run', async () => {
    const names = (await post(`${gw.url}/tool/list`, {}, reader)).json.tools
      .map((t: { name: string }) => t.name)
      .sort();
    expect(names).toEqual(['args', 'echo', 'hold', 'read_notes']);
    expect((await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), reader)).json.data.success).toBe(true);
  });

  it("is off by default: the spec's tool_denied", async () => {
    const plain = await startSecureGateway({
      config: {
        auth: { tokens: [{ name: 'reader', token_sha256: sha256(READER), allow: ['read_*'] }] },
        sessions: { required: false },
      },
    });
    try {
      const r = await post(`${plain.url}/tool/call`, callBody('write_notes', {}), reader);
      expect(r.status).toBe(403);
      expect(r.json.code).toBe('tool_denied');
    } finally {
      await plain.close();
    }
  });
});
