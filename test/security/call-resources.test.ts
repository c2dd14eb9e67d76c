/** Call resources (POST /tool/calls) under auth: sessions, ownership, and per-call event-stream tokens for EventSource. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody, openSse } from '../helpers/server.js';
import { post, releaseHeld, sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const ALICE = 'alice-calls-token-0123456789abcdef';
const BOB = 'bob-calls-token-fedcba9876543210ab';
const alice = { Authorization: `Bearer ${ALICE}` };
const bob = { Authorization: `Bearer ${BOB}` };

describe('call resources with auth', () => {
  let gw: SecureGateway;
  let session: string;
  beforeAll(async () => {
    gw = await startSecureGateway({
      config: {
        auth: {
          tokens: [
            { name: 'alice', token_sha256: sha256(ALICE) },
            { name: 'bob', token_sha256: sha256(BOB) },
          ],
        },
        server: { cors_origins: ['https://app.example'] },
      },
    });
    session = (await post(`${gw.url}/handshake`, { agent_caps: ['tools'] }, alice)).json.session_id;
  });
  afterAll(() => gw.close());

  it('needs the token and a session to start a call', async () => {
    expect((await post(`${gw.url}/tool/calls`, callBody('echo', { text: 'x' }, { session_id: session }))).status).toBe(
      401,
    );
    const noSession = await post(`${gw.url}/tool/calls`, callBody('echo', { text: 'x' }), alice);
    expect(noSession.status).toBe(401);
    expect(noSession.json.message).toMatch(/session/);
    const ok = await post(`${gw.url}/tool/calls`, callBody('echo', { text: 'x' }, { session_id: session }), alice);
    expect(ok.status).toBe(202);
  });

  it('gives EventSource a per-call access_token in events_url, valid for that call only', async () => {
    const a = (await post(`${gw.url}/tool/calls`, callBody('echo', { text: 'one' }, { session_id: session }), alice))
      .json;
    const b = (await post(`${gw.url}/tool/calls`, callBody('echo', { text: 'two' }, { session_id: session }), alice))
      .json;
    const url = new URL(a.events_url);
    expect(url.searchParams.get('access_token')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // No Authorization header, as from a browser's EventSource (with an allowed Origin).
    const s = await openSse(a.events_url, { headers: { Origin: 'https://app.example' } });
    expect(s.status).toBe(200);
    expect(s.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const events = await s.rest();
    expect(events.at(-1)?.json.data.data).toEqual({ text: 'one' });

    const withoutToken = await fetch(a.events_url.split('?')[0]);
    expect(withoutToken.status).toBe(401);
    const otherCallsToken = new URL(a.events_url);
    otherCallsToken.searchParams.set('access_token', new URL(b.events_url).searchParams.get('access_token')!);
    expect((await fetch(otherCallsToken)).status).toBe(401);
    const forged = new URL(a.events_url);
    forged.searchParams.set('access_token', 'A'.repeat(43));
    expect((await fetch(forged)).status).toBe(401);
    // The owner's bearer token works without the query token; another token gets the 404 of a missing call
    // (issue 20: the answer must not tell whether a call id exists).
    expect((await fetch(a.events_url.split('?')[0], { headers: alice })).status).toBe(200);
    expect((await fetch(a.events_url.split('?')[0], { headers: bob })).status).toBe(404);
  });

  it('hides a call from other tokens: reading or cancelling it is the same 404 as for no call', async () => {
    const started = (
      await post(`${gw.url}/tool/calls`, callBody('hold', { ms: 20_000 }, { session_id: session }), alice)
    ).json;
    const asBob = await fetch(started.result_url, { headers: bob });
    expect(asBob.status).toBe(404);
    const missing = await fetch(started.result_url.replace(started.call_id, 'no-such-call'), { headers: bob });
    const [bobBody, missingBody] = [await asBob.json(), await missing.json()];
    expect(bobBody.code).toBe('not_found');
    expect(bobBody.message.replace(started.call_id, 'X')).toBe(missingBody.message.replace('no-such-call', 'X'));
    expect((await fetch(started.result_url, { method: 'DELETE', headers: bob })).status).toBe(404);
    expect((await fetch(started.result_url, { headers: alice })).status).toBe(200);
    expect(gw.gateway.engine.running).toBe(1);
    const cancelled = await fetch(started.result_url, { method: 'DELETE', headers: alice });
    expect(cancelled.status).toBe(200);
    releaseHeld();
    await expect.poll(() => gw.gateway.engine.running, { timeout: 10_000 }).toBe(0);
  });
});
