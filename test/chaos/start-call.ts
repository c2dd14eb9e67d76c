/** Starting a call through nginx, as every HTTP traffic loop of a chaos run does it. */
import { noAnswer } from './client-errors.js';
import type { Door } from './ledger.js';
import { ticker, type Traffic } from './traffic.js';

/**
 * Counts a call started on `door` and POSTs a ticker of `ticks` events to `path`. Its answer (status and text), or
 * undefined once the call is counted: lost when nothing answered within `answerWithinMs`, failed when the request
 * itself failed.
 */
export async function startTicker(
  t: Traffic,
  door: Door,
  path: string,
  ticks: number,
  everyMs: number,
): Promise<{ status: number; body: string; startedAt: number } | undefined> {
  t.ledger.started(door);
  const startedAt = Date.now();
  try {
    const res = await fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(ticker(ticks, everyMs)),
      signal: AbortSignal.timeout(t.answerWithinMs),
    });
    return { status: res.status, body: await res.text(), startedAt };
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') {
      t.ledger.outcome(door, 'lost', { id: `(POST ${path})`, note: `no answer within ${t.answerWithinMs} ms` });
    } else {
      const e = noAnswer(err);
      t.ledger.error(door, e.kind, e.text, e.acceptable);
      t.ledger.outcome(door, 'failed');
    }
    return undefined;
  }
}
