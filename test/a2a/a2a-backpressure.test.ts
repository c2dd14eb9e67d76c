/**
 * Back-pressure on an A2A agent's streamed updates: a real @a2a-js/sdk peer publishes far more artifact chunks than
 * `limits.call_events_bytes` holds, as fast as it can, to a gateway whose SSE client does not read for a while. The
 * gateway must stop reading the peer's stream while its reader is behind (seen at the peer: its streamed answer
 * stops getting out and is not finished) instead of taking it all and dropping the updates; the client then gets
 * every chunk, in order, with no gap notice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkPeer, type SdkPeer } from '../helpers/a2a-sdk-peer.js';
import { gapNotices, heldOrFinished, pausedCall } from '../helpers/paused-sse.js';
import { startGateway, type TestGateway } from '../helpers/server.js';
import { waitFor } from '../tools/procs.js';

const KB = 1024;
/** 10,000 chunks of 1 KB: ~13 MB of SSE from the peer, ~16 MB of artifact events, 250 times the call's budget. */
const CHUNKS = 10_000;

let peer: SdkPeer;
let gw: TestGateway;
beforeAll(async () => {
  peer = await startSdkPeer('strict', 'Flood Agent', { flood: CHUNKS });
  gw = await startGateway({
    config: {
      agents: { flood: { card: peer.url, timeout_ms: 120_000 } },
      calls: { max_events: 1_000 },
      limits: { call_events_bytes: 64 * KB, stream_unsent_bytes: 16 * KB },
    },
  });
});
afterAll(async () => {
  await gw?.close();
  await peer?.close();
});

/** Waits until the peer has published every chunk, then whether its streamed answer was held or got out. */
async function peerHeldOrFinished(first: number): Promise<'held' | 'finished'> {
  const stream = await waitFor('the streaming request at the peer', () => peer.responses[first], 20_000);
  await waitFor('the peer to publish every chunk', () => peer.flooded() === CHUNKS, 30_000);
  return heldOrFinished(stream, "the peer's stream");
}

describe('A2A back-pressure', () => {
  it('stops reading a peer that streams faster than the SSE reader reads; the reader gets every update, with no gap', async () => {
    const first = peer.responses.length;
    const call = await pausedCall(gw.url, 'Flood_Agent_flood', { task: 'flood' });
    expect(await peerHeldOrFinished(first), 'the gateway took the whole stream while its reader read nothing').toBe(
      'held',
    );

    const frames = await call.read();
    expect(gapNotices(frames)).toEqual([]);
    const chunks = frames
      .filter((f) => f.event === 'tool/event' && f.json.kind === 'artifact')
      .map((f) => f.json.data.chunk as string);
    expect(chunks).toHaveLength(CHUNKS);
    expect(chunks.every((c, i) => c.startsWith(`${i} x`))).toBe(true);
    const seqs = frames.filter((f) => f.event === 'tool/event').map((f) => f.json.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    const last = frames.at(-1)!;
    expect(last.event).toBe('tool/call/resp');
    expect(last.json.data).toMatchObject({ success: true });
  }, 120_000);
});
