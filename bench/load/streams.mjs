/**
 * Client process for concurrent call-resource streams: start `streams` calls
 * of the `hold` tool with POST /tool/calls, open each one's events_url as an
 * SSE stream (eventsource-parser), print `OPEN` once every stream is open
 * (the harness then measures the server), and report when all have ended.
 *   node load/streams.mjs '{"url":…,"streams":10000,"holdMs":60000,"concurrency":200}'
 */
import http from 'node:http';
import { createParser } from 'eventsource-parser';

const spec = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency });
const streamAgent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

const stats = {
  opened: 0,
  completed: 0,
  errors: 0,
  events: 0,
  heartbeats: 0,
  minHeartbeats: Infinity,
  firstError: null,
  postRetries: 0,
};

function startCall(tries = 3) {
  const body = JSON.stringify({
    type: 'tool/call/req',
    tool_name: 'hold',
    arguments: { ms: spec.holdMs },
    timeout: 600,
  });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${spec.url}/tool/calls`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          res.statusCode === 202
            ? resolve(JSON.parse(text))
            : reject(new Error(`POST /tool/calls: ${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', (err) => {
      // A kept-alive connection the server closed as idle just as this request went out on it (the keep-alive race
      // Node's docs describe for req.reusedSocket): nothing reached the server, so send it again on a fresh one. Counted.
      if (req.reusedSocket && err.code === 'ECONNRESET' && tries > 1) {
        stats.postRetries++;
        startCall(tries - 1).then(resolve, reject);
        return;
      }
      reject(err);
    });
    req.end(body);
  });
}

/** Open one events stream; resolves `opened` when the stream's first bytes arrive, `done` when it ends. */
function openStream(eventsUrl) {
  let onOpen;
  const opened = new Promise((r) => (onOpen = r));
  const done = new Promise((resolve) => {
    let heartbeats = 0;
    let final = false;
    const parser = createParser({
      onEvent(e) {
        if (e.event === 'tool/event') stats.events++;
        else if (e.event === 'tool/call/resp') final = JSON.parse(e.data).data?.success === true;
      },
      onComment(c) {
        if (c.trim() === 'heartbeat') heartbeats++;
      },
    });
    const fail = (err) => {
      stats.errors++;
      stats.firstError ??= String(err.message ?? err);
      onOpen();
      resolve();
    };
    const req = http.get(eventsUrl, { agent: streamAgent, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return fail(new Error(`GET events: ${res.statusCode}`));
      res.setEncoding('utf8');
      let first = true;
      res.on('data', (d) => {
        if (first) {
          first = false;
          stats.opened++;
          onOpen();
        }
        parser.feed(d);
      });
      res.on('end', () => {
        if (final) stats.completed++;
        else return fail(new Error('stream ended without a successful tool/call/resp'));
        stats.heartbeats += heartbeats;
        stats.minHeartbeats = Math.min(stats.minHeartbeats, heartbeats);
        resolve();
      });
      res.on('error', fail);
    });
    req.on('error', fail);
  });
  return { opened, done };
}

const started = performance.now();
const done = [];
let next = 0;
async function worker() {
  while (next < spec.streams) {
    next++;
    const accepted = await startCall();
    const s = openStream(accepted.events_url);
    done.push(s.done);
    await s.opened;
  }
}
await Promise.all(Array.from({ length: spec.concurrency }, worker));
const openSeconds = (performance.now() - started) / 1000;
process.stdout.write(`OPEN ${stats.opened}\n`);
await Promise.all(done);
process.stdout.write(
  `${JSON.stringify({ ...stats, streams: spec.streams, openSeconds, totalSeconds: (performance.now() - started) / 1000 })}\n`,
);
