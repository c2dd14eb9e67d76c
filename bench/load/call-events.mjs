/**
 * Call-resource watcher process: POST /tool/calls to the `ticks` tool on one
 * gateway, follow GET …/events on another (or the same), parse the SSE with a
 * real parser, check every event arrives once and in order, and measure
 * emit-to-arrival latency (the event's message is its emit time). One JSON line.
 *   node load/call-events.mjs '{"start":URL,"watch":URL,"count":N,"everyMs":0}'
 */
import { createParser } from 'eventsource-parser';
import { request } from 'undici';

const spec = JSON.parse(process.argv[2]);
const started = performance.now();
const post = await request(`${spec.start}/tool/calls`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    type: 'tool/call/req',
    tool_name: 'ticks',
    arguments: { count: spec.count, every_ms: spec.everyMs ?? 0 },
    timeout: 600,
  }),
});
const accepted = await post.body.json();
if (post.statusCode !== 202)
  throw new Error(`POST /tool/calls answered ${post.statusCode}: ${JSON.stringify(accepted)}`);
const eventsUrl = accepted.events_url.replace(spec.start, spec.watch);
const res = await request(eventsUrl, { headers: { accept: 'text/event-stream' } });
const openedAt = performance.timeOrigin + performance.now();
let events = 0;
let lastSeq = -1;
let outOfOrder = 0;
let final;
/** Latency of the events emitted after the stream opened (earlier ones were replayed, not followed). */
const live = [];
const parser = createParser({
  onEvent(e) {
    if (e.event === 'tool/event') {
      const arrived = performance.timeOrigin + performance.now();
      const seq = Number(e.id);
      if (seq !== lastSeq + 1) outOfOrder++;
      lastSeq = seq;
      events++;
      const emitted = Number(JSON.parse(e.data).data.message);
      if (emitted >= openedAt) live.push(arrived - emitted);
    } else if (e.event === 'tool/call/resp') {
      final = JSON.parse(e.data);
    }
  },
});
const decoder = new TextDecoder();
for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
const seconds = (performance.now() - started) / 1000;
live.sort((a, b) => a - b);
const pct = (p) => (live.length ? live[Math.min(live.length - 1, Math.floor(live.length * p))] : NaN);
process.stdout.write(
  `${JSON.stringify({ status: res.statusCode, events, outOfOrder, finalOk: final?.data?.success === true, seconds, eventsPerS: events / seconds, live: live.length, p50: pct(0.5), p99: pct(0.99) })}\n`,
);
