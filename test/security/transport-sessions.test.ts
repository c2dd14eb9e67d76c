/**
 * An A2E transport session id is not a credential (issue 20, finding 3):
 * the session belongs to the token that opened it; a request on it with no
 * token or another token is refused with a clear reason, a handshake cannot
 * rebind it, a session one token opened cannot be fixed on another, and
 * session ids never appear in the log or the audit file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const ALICE = 'transport-alice-token-0123456789abc';
const BOB = 'transport-bob-token-0123456789abcdef';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

let gw: SecureGateway;
let base: string;
let dir: string;
let auditFile: string;
/** Every transport session id the tests saw, to look for in the logs. */
const sessionIds: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'a2e-transport-sessions-'));
  auditFile = join(dir, 'audit.jsonl');
  gw = await startSecureGateway({
    config: {
      auth: {
        tokens: [
          { name: 'alice', token_sha256: sha256(ALICE) },
          { name: 'bob', token_sha256: sha256(BOB) },
        ],
      },
      audit: { path: auditFile },
    },
  });
  base = `${gw.url}/a2e/v1`;
});
afterAll(async () => {
  await gw.close();
  rmSync(dir, { recursive: true, force: true });
});

async function aliceSession(): Promise<A2eTestClient> {
  const { client, handshake } = await A2eTestClient.connect(base, {}, bearer(ALICE));
  expect(handshake.response.ok).toBe(true);
  sessionIds.push(client.sessionId);
  return client;
}

const detail = async (res: Response) => ((await res.json()) as { detail: string }).detail;
const echo = (text: string) => ({ type: 'tool/call/req', tool_name: 'echo', arguments: { text } });

describe('A2E transport sessions belong to the token that opened them', () => {
  it('no credential with the session id: 401 on /send and /stream, and nothing runs', async () => {
    const alice = await aliceSession();
    const send = await alice.send(echo('intruder'), { 'X-Session-Id': alice.sessionId });
    expect(send.status).toBe(401);
    expect(send.headers.get('www-authenticate')).toBe('Bearer realm="a2e-gateway"');
    // The gate's answer, as on every door: an A2E error saying what to send.
    expect(await send.json()).toMatchObject({
      type: 'error',
      code: 'unauthorized',
      message: expect.stringContaining('requires a token'),
    });
    const stream = await fetch(`${base}/stream`, { headers: { 'X-Session-Id': alice.sessionId } });
    expect(stream.status).toBe(401);
    await stream.body?.cancel();
    // Alice's stream got nothing from it.
    const own = await alice.request(echo('mine'));
    expect(own.response.data).toMatchObject({ success: true, data: { text: 'mine' } });
    expect(alice.received.some((m) => JSON.stringify(m).includes('intruder'))).toBe(false);
    await alice.dropStream();
  });

  it("another token with the session id: 403 saying whose it is, on /send and /stream; the owner's stream stays", async () => {
    const alice = await aliceSession();
    const send = await alice.send(echo('intruder'), { ...bearer(BOB), 'X-Session-Id': alice.sessionId });
    expect(send.status).toBe(403);
    expect(await detail(send)).toBe(
      'this session belongs to another token; open your own with POST /session and your token',
    );
    const stream = await fetch(`${base}/stream`, { headers: { ...bearer(BOB), 'X-Session-Id': alice.sessionId } });
    expect(stream.status).toBe(403);
    expect(await detail(stream)).toContain('belongs to another token');
    // Bob's attempt did not take alice's stream over: she still gets her answers on it.
    const own = await alice.request(echo('still mine'));
    expect(own.response.data).toMatchObject({ success: true, data: { text: 'still mine' } });
    await alice.dropStream();
  });

  it("a handshake cannot rebind a session: bob's auth_token on alice's session is refused, alice stays the caller", async () => {
    const alice = await aliceSession();
    const hs = await alice.request({ type: 'handshake/req', agent_caps: ['tools'], auth_token: BOB });
    expect(hs.response).toMatchObject({ type: 'handshake/resp', ok: false, session_id: '' });
    expect(hs.response.reason).toBe(
      'auth_token is another token than the one this session belongs to; open a new session for that token',
    );
    expect(JSON.stringify(hs.response)).not.toContain(BOB);
    // A failed handshake replaces the previous one: a new one is needed, and it is alice again.
    expect((await alice.request(echo('x'))).response).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect((await alice.request({ type: 'handshake/req', agent_caps: ['tools'] })).response.ok).toBe(true);
    expect((await alice.request({ ...echo('as-alice'), id: 'as-alice-call' })).response.data.success).toBe(true);
    const audited = () =>
      auditLines()
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.req_id === 'as-alice-call');
    await expect.poll(audited, { timeout: 10_000 }).toMatchObject({ token: 'alice', success: true });
    await alice.dropStream();
  });

  it('a session bob opened cannot be fixed on alice: her requests on it are refused, with or without her token', async () => {
    const bobs = await A2eTestClient.open(base, bearer(BOB));
    sessionIds.push(bobs.sessionId);
    const withAlice = await bobs.send(
      { type: 'handshake/req', agent_caps: ['tools'], auth_token: ALICE },
      { ...bearer(ALICE), 'X-Session-Id': bobs.sessionId },
    );
    expect(withAlice.status).toBe(403);
    const bare = await bobs.send(
      { type: 'handshake/req', agent_caps: ['tools'], auth_token: ALICE },
      { 'X-Session-Id': bobs.sessionId },
    );
    expect(bare.status).toBe(401);
    // Nothing reached the session: bob's stream, once he opens it, has nothing queued.
    await bobs.openStream();
    const ping = await bobs.request({ type: 'ping', id: 'first-on-bobs-stream' });
    expect(ping.response.type).toBe('pong');
    expect(bobs.received.map((m) => m.req_id)).toEqual(['first-on-bobs-stream']);
    await bobs.dropStream();
  });

  it('session ids never appear in the log or the audit file; a digest stands for them', async () => {
    const alice = await aliceSession();
    // Exercise what logs: open, calls (audited), refusals, an error answer, shutdown (close).
    await alice.request(echo('logged?'));
    await alice.request({ type: 'tool/call/req', tool_name: 'no_such_tool', arguments: {} });
    await alice.send({ type: 'ping' }, { 'X-Session-Id': alice.sessionId });
    await alice.send({ type: 'ping' }, { ...bearer(BOB), 'X-Session-Id': alice.sessionId });
    await alice.send({ type: 'shutdown', timeout: 0 });
    await alice.streamEnded();
    await expect.poll(() => auditLines().length, { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => gw.log.text.includes('A2E transport session closed'), { timeout: 10_000 }).toBe(true);

    const log = gw.log.text;
    const audit = auditLines().join('\n');
    expect(sessionIds.length).toBeGreaterThanOrEqual(5);
    for (const id of sessionIds) {
      expect(log).not.toContain(id);
      expect(audit).not.toContain(id);
    }
    // The check is not vacuous: the transport did log its sessions, by a digest of the id.
    const opened = gw.log.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'A2E transport session opened');
    expect(opened.length).toBeGreaterThanOrEqual(sessionIds.length);
    for (const line of opened) expect(line.session_ref).toMatch(/^[0-9a-f]{12}$/);
  });
});

function auditLines(): string[] {
  try {
    return readFileSync(auditFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}
