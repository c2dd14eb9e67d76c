/**
 * SSE client process: POST one streaming call, parse the response with a
 * real SSE parser (eventsource-parser), count the events, print one JSON line.
 *   node load/sse.mjs '{"url":…,"body":…,"expect":100000}'
 */
import { createParser } from 'eventsource-parser';
import { request } from 'undici';

const spec = JSON.parse(process.argv[2]);
const started = performance.now();
const res = await request(spec.url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
  body: spec.body,
});
let events = 0;
let lastSeq = -1;
let outOfOrder = 0;
let final;
const parser = createParser({
  onEvent(e) {
    if (e.event === 'tool/event') {
      const seq = Number(e.id);
      if (seq !== lastSeq + 1) outOfOrder++;
      lastSeq = seq;
      events++;
    } else if (e.event === 'tool/call/resp') {
      final = JSON.parse(e.data);
    }
  },
});
const decoder = new TextDecoder();
let bytes = 0;
for await (const chunk of res.body) {
  bytes += chunk.byteLength;
  parser.feed(decoder.decode(chunk, { stream: true }));
}
const seconds = (performance.now() - started) / 1000;
process.stdout.write(
  `${JSON.stringify({
    status: res.statusCode,
    events,
    outOfOrder,
    finalOk: final?.data?.success === true,
    bytes,
    seconds,
    eventsPerS: events / seconds,
  })}\n`,
);
