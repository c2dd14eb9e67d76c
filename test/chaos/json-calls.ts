/**
 * JSON calls in a chaos run: `POST /tool/call` through nginx, one after
 * another per worker, each a short ticker. A call is ok (200, success, every
 * tick counted), failed visibly (an answer that says what went wrong), or lost
 * (no answer within `answerWithinMs`).
 */
import { httpError, toolFailure } from './client-errors.js';
import { startTicker } from './start-call.js';
import type { Traffic } from './traffic.js';

const TICKS = 6;
const EVERY_MS = 50;

export async function jsonCalls(t: Traffic, workers: number): Promise<void> {
  await Promise.all(Array.from({ length: workers }, () => worker(t)));
}

async function worker(t: Traffic): Promise<void> {
  while (Date.now() < t.untilMs) {
    const answer = await startTicker(t, 'json', '/tool/call', TICKS, EVERY_MS);
    if (!answer) continue;
    const { status, body, startedAt } = answer;
    const resp = status === 200 ? parse(body) : undefined;
    if (resp?.type === 'tool/call/resp' && resp.data?.success === true && resp.data.data?.ticks === TICKS) {
      t.ledger.outcome('json', 'ok');
    } else if (resp?.type === 'tool/call/resp' && resp.data?.success === false) {
      const e = toolFailure(resp.data, t.ledger.instanceDied(undefined, startedAt));
      t.ledger.error('json', e.kind, e.text, e.acceptable);
      t.ledger.outcome('json', 'failed');
    } else {
      const e =
        status === 200
          ? { kind: 'HTTP 200, not a tool response', text: body.slice(0, 240), acceptable: false }
          : httpError(status, body);
      t.ledger.error('json', e.kind, e.text, e.acceptable);
      t.ledger.outcome('json', 'failed');
      // An instance or Redis is down: give it a moment rather than spinning on errors.
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function parse(body: string): any {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
