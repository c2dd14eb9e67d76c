/**
 * Call ids from a request are checked for their shape before any store key is built from them: an id that is not
 * one the gateway could have handed out gets the same 404 as an unknown one, on every call route and on both
 * stores. The regression (a red-team probe): on the Redis store `GET /tool/calls/{id}:events` read the call's event
 * stream as if it were a call's hash (`call:<id>:events`) and answered differently from an unknown id.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { STORE_KINDS, storeConfigs } from '../helpers/stores.js';

const stores = storeConfigs();

describe.each(STORE_KINDS)('call ids of malformed shape (store: %s)', (kind) => {
  let gw: TestGateway;
  /** A finished call's id: its Redis keys exist. */
  let id: string;
  beforeAll(async () => {
    gw = await startGateway({ plugins: [definePlugin('t', [echoTool])], config: { ...(await stores(kind)) } });
    const res = await postJson(`${gw.url}/tool/calls`, callBody('echo', { text: 'hi' }));
    expect(res.status).toBe(202);
    id = res.json.call_id;
  });
  afterAll(() => gw?.close());

  const probes = () => [
    `${id}:events`, // the call's event stream key
    `${id}:`,
    `${id.toUpperCase()}`,
    `${id}x`,
    '*',
    'x'.repeat(5000),
    'calls:leases',
    '%00',
  ];

  it('GET, DELETE and the events stream answer 404 not_found for each, like an unknown id, naming no key', async () => {
    await expect
      .poll(async () => ((await (await fetch(`${gw.url}/tool/calls/${id}`)).json()) as any).state)
      .toBe('completed');
    const unknown = crypto.randomUUID();
    const answers = async (callId: string) => {
      const path = `${gw.url}/tool/calls/${encodeURIComponent(callId)}`;
      const out = [];
      for (const [method, url] of [
        ['GET', path],
        ['DELETE', path],
        ['GET', `${path}/events`],
      ] as const) {
        const res = await fetch(url, { method });
        const body = (await res.json()) as any;
        out.push({ status: res.status, type: body.type, code: body.code });
        if (callId !== unknown) {
          expect(body.message).toContain('no call "');
          expect(body.message.length, 'the error echoes at most a short piece of a bad id').toBeLessThan(600);
          expect(body.message).not.toMatch(/WRONGTYPE|redis|key/i);
        }
      }
      return out;
    };
    const expected = await answers(unknown);
    expect(expected).toEqual(Array(3).fill({ status: 404, type: 'error', code: 'not_found' }));
    for (const probe of probes())
      expect({ probe: probe.slice(0, 60), got: await answers(probe) }).toEqual({
        probe: probe.slice(0, 60),
        got: expected,
      });
    // The real call is still there and still finished (nothing was canceled or overwritten by a probe).
    const real = await fetch(`${gw.url}/tool/calls/${id}`);
    expect(real.status).toBe(200);
    expect(await real.json()).toMatchObject({ call_id: id, state: 'completed' });
  });
});

describe.each(STORE_KINDS)('call ids of malformed shape with auth (store: %s)', (kind) => {
  let gw: TestGateway;
  const sha = (t: string) => createHash('sha256').update(t).digest('hex');
  beforeAll(async () => {
    gw = await startGateway({
      plugins: [definePlugin('t', [echoTool])],
      config: { ...(await stores(kind)), auth: { tokens: [{ name: 'alice', token_sha256: sha('alice-token-123') }] } },
    });
  });
  afterAll(() => gw?.close());

  it('the events stream answers a malformed id exactly like an unknown one: 401 without a credential, 404 with one', async () => {
    const status = async (callId: string, headers: Record<string, string> = {}) =>
      (await fetch(`${gw.url}/tool/calls/${encodeURIComponent(callId)}/events`, { headers })).status;
    const bearer = { authorization: 'Bearer alice-token-123' };
    for (const probe of [crypto.randomUUID(), `${crypto.randomUUID()}:events`, 'x'.repeat(300)]) {
      expect({ probe, anonymous: await status(probe), alice: await status(probe, bearer) }).toEqual({
        probe,
        anonymous: 401,
        alice: 404,
      });
    }
  });
});
