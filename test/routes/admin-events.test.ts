/**
 * GET /admin/events against a real gateway: the snapshot, live lifecycle
 * events from every door (call resources, the JSON route, refusals), resume
 * with Last-Event-ID, nothing recorded while nobody watches, and per-token
 * visibility with auth.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatedPlugin } from '../helpers/gated.js';
import {
  callBody,
  openSse,
  postJson,
  startGateway,
  type ReceivedEvent,
  type SseStream,
  type TestGateway,
} from '../helpers/server.js';

const gates = gatedPlugin();
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ plugins: [gates.plugin], config: { server: { heartbeat_s: 1 } } });
});
afterAll(async () => {
  await gw?.close();
});

/** The next event that is not a heartbeat, within a bound. */
async function nextEvent(stream: SseStream, ms = 10_000): Promise<ReceivedEvent> {
  const e = await Promise.race([
    stream.next(),
    new Promise<null>((_, reject) => setTimeout(() => reject(new Error(`no event within ${ms} ms`)), ms)),
  ]);
  if (!e) throw new Error('the stream ended');
  return e;
}

describe('GET /admin/events', () => {
  it('records nothing while nobody watches', async () => {
    const feed = gw.gateway.engine.activity;
    expect(feed.active).toBe(false);
    expect((await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'unwatched' }))).status).toBe(200);
    expect((await postJson(`${gw.url}/tool/call`, callBody('nope', {}))).status).toBe(404);
    expect(feed.lastSeq).toBe(-1);
    expect(feed.since(-1)).toEqual([]);
  });

  it('opens with a snapshot, then reports calls from every door as they start, finish or are refused', async () => {
    const stream = await openSse(`${gw.url}/admin/events`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const snapshot = await nextEvent(stream);
    expect(snapshot.event).toBe('snapshot');
    expect(snapshot.id).toMatch(/^[0-9a-z]+\.-?\d+$/);
    expect(snapshot.json.calls).toEqual([]);

    // A call resource: started (with its URLs) while it runs, finished when it ends.
    const started = await postJson(`${gw.url}/tool/calls`, callBody('gated', { key: 'ae-1', steps: 1 }));
    expect(started.status).toBe(202);
    const e1 = await nextEvent(stream);
    expect(e1.event).toBe('call.started');
    expect(e1.json).toMatchObject({
      type: 'call.started',
      call_id: started.json.call_id,
      tool_name: 'gated',
      kind: 'native',
      principal: null,
      state: 'running',
      duration_ms: null,
      events_url: started.json.events_url,
      result_url: started.json.result_url,
    });
    gates.open('ae-1', 0);
    const e2 = await nextEvent(stream);
    expect(e2.event).toBe('call.finished');
    expect(e2.json).toMatchObject({ call_id: started.json.call_id, state: 'completed', error_code: null });
    expect(e2.json.duration_ms).toBeGreaterThanOrEqual(0);

    // The JSON route: no call resource, so no URLs.
    expect((await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'hi' }))).status).toBe(200);
    const e3 = await nextEvent(stream);
    const e4 = await nextEvent(stream);
    expect([e3.event, e4.event]).toEqual(['call.started', 'call.finished']);
    expect(e4.json).toMatchObject({ tool_name: 'echo', state: 'completed' });
    expect(e4.json.events_url).toBeUndefined();

    // A refusal: it never became a call.
    expect((await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 5 }))).status).toBe(422);
    const e5 = await nextEvent(stream);
    expect(e5.json).toMatchObject({
      type: 'call.refused',
      call_id: '',
      tool_name: 'echo',
      state: 'refused',
      error_code: 'invalid_arguments',
    });

    // Ids increase by one; a second watcher's snapshot holds the finished call resource.
    const seqs = [e1, e2, e3, e4, e5].map((e) => Number(e.id!.split('.')[1]));
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    const second = await openSse(`${gw.url}/admin/events`);
    const snap2 = await nextEvent(second);
    expect(snap2.json.calls.map((c: any) => [c.call_id, c.state])).toEqual(
      expect.arrayContaining([
        [started.json.call_id, 'completed'],
        [e4.json.call_id, 'completed'],
      ]),
    );
    second.abort();
    stream.abort();
  });

  it('resumes with Last-Event-ID: exactly the events missed, or a new snapshot for an id it cannot resume', async () => {
    const stream = await openSse(`${gw.url}/admin/events`);
    const snapshot = await nextEvent(stream);
    const running = await postJson(`${gw.url}/tool/calls`, callBody('gated', { key: 'ae-2', steps: 1 }));
    const seen = await nextEvent(stream);
    expect(seen.json.call_id).toBe(running.json.call_id);
    stream.abort();

    // While disconnected: the running call finishes and another runs.
    gates.open('ae-2', 0);
    await fetch(`${gw.url}/tool/calls/${running.json.call_id}/events`).then((r) => r.text());
    expect((await postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'missed' }))).status).toBe(200);

    const resumed = await openSse(`${gw.url}/admin/events`, { headers: { 'Last-Event-ID': seen.id! } });
    const missed = [await nextEvent(resumed), await nextEvent(resumed), await nextEvent(resumed)];
    expect(missed.map((e) => [e.event, e.json.tool_name])).toEqual([
      ['call.finished', 'gated'],
      ['call.started', 'echo'],
      ['call.finished', 'echo'],
    ]);
    resumed.abort();

    // The snapshot's own id resumes too; an id from another run of the gateway gets a snapshot.
    const fromSnapshot = await openSse(`${gw.url}/admin/events`, { headers: { 'Last-Event-ID': snapshot.id! } });
    expect((await nextEvent(fromSnapshot)).json.call_id).toBe(running.json.call_id);
    fromSnapshot.abort();
    const foreign = await openSse(`${gw.url}/admin/events`, { headers: { 'Last-Event-ID': 'zzz.3' } });
    const fresh = await nextEvent(foreign);
    expect(fresh.event).toBe('snapshot');
    expect(fresh.json.calls.map((c: any) => c.call_id)).toContain(running.json.call_id);
    foreign.abort();
  });

  it('with auth: needs a token, and a token sees only its own calls', async () => {
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    const authGw = await startGateway({
      plugins: [gatedPlugin().plugin],
      config: {
        auth: {
          tokens: [
            { name: 'alice', token_sha256: sha('alice-token-123') },
            { name: 'bob', token_sha256: sha('bob-token-456') },
          ],
        },
        sessions: { required: false },
      },
    });
    try {
      const anonymous = await fetch(`${authGw.url}/admin/events`);
      expect(anonymous.status).toBe(401);
      expect((await anonymous.json()).code).toBe('unauthorized');

      const alice = await openSse(`${authGw.url}/admin/events`, {
        headers: { Authorization: 'Bearer alice-token-123' },
      });
      expect((await nextEvent(alice)).event).toBe('snapshot');
      const bobCall = await postJson(`${authGw.url}/tool/call`, callBody('echo', { text: 'bob' }), {
        Authorization: 'Bearer bob-token-456',
      });
      expect(bobCall.status).toBe(200);
      const aliceCall = await postJson(`${authGw.url}/tool/calls`, callBody('echo', { text: 'alice' }), {
        Authorization: 'Bearer alice-token-123',
      });
      expect(aliceCall.status).toBe(202);
      const first = await nextEvent(alice);
      // Bob's call came first and is not shown; Alice's is, with an events_url carrying its access token.
      expect(first.json).toMatchObject({ type: 'call.started', principal: 'alice', call_id: aliceCall.json.call_id });
      expect(first.json.events_url).toContain('access_token=');
      expect((await nextEvent(alice)).json).toMatchObject({ type: 'call.finished', principal: 'alice' });
      alice.abort();
    } finally {
      await authGw.close();
    }
  });
});
