/**
 * Call resources in a chaos run: `POST /tool/calls` through nginx, then its
 * events followed EventSource-style (`GET /tool/calls/{id}/events`), resumed
 * with Last-Event-ID whenever the stream is cut (an instance killed, Redis
 * gone) and once on purpose mid-call, so resumes land on other instances
 * even between kills. Every event is checked (each seq once, in order, none
 * skipped, "tick N" at seq N) and the call ends ok, failed visibly, or lost.
 */
import { a2eError, httpError, noAnswer, toolFailure, type Classified } from './client-errors.js';
import { SeqCheck } from './ledger.js';
import { openEvents } from './sse-reader.js';
import { startTicker } from './start-call.js';
import { gapOf, isTick, pidOf, type Traffic } from './traffic.js';

const TICKS = 30;
const EVERY_MS = 60;

export async function callResources(t: Traffic, workers: number): Promise<void> {
  await Promise.all(Array.from({ length: workers }, () => worker(t)));
}

async function worker(t: Traffic): Promise<void> {
  while (Date.now() < t.untilMs) {
    const answer = await startTicker(t, 'resource', '/tool/calls', TICKS, EVERY_MS);
    if (!answer) continue;
    const { status, body, startedAt } = answer;
    if (status !== 202) {
      failed(t, httpError(status, body));
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    await follow(t, JSON.parse(body).call_id as string, startedAt);
  }
}

function failed(t: Traffic, e: Classified): void {
  t.ledger.error('resource', e.kind, e.text, e.acceptable);
  t.ledger.outcome('resource', 'failed');
}

/** Follow call `id` to its final response, reconnecting as often as it takes, until it goes `answerWithinMs` without a sign of life. */
async function follow(t: Traffic, id: string, startedAt: number): Promise<void> {
  const { ledger } = t;
  const check = new SeqCheck(ledger, ledger.events, `call ${id}`);
  const url = `${t.url}/tool/calls/${id}/events`;
  const cutAt = Math.floor(t.random() * (TICKS - 2)) + 1;
  let cutDone = false;
  let deadline = Date.now() + t.answerWithinMs;
  let last = `nothing after the 202 (${t.at(startedAt)})`;
  let owner: number | undefined;
  const final = (resp: any, frameId: string | undefined): void => {
    if (frameId !== undefined) check.end(Number(frameId)); // the response's id is the call's event count
    if (resp?.data?.success === true) {
      check.end(TICKS);
      if (resp.data.data?.ticks === TICKS) ledger.outcome('resource', 'ok');
      else failed(t, { kind: 'wrong result', text: JSON.stringify(resp.data.data).slice(0, 240), acceptable: false });
    } else {
      failed(t, toolFailure(resp?.data ?? {}, ledger.instanceDied(owner, startedAt)));
    }
  };
  for (;;) {
    if (Date.now() >= deadline) {
      ledger.outcome('resource', 'lost', {
        id,
        note: `call ${id}: no final response within ${t.answerWithinMs} ms of the last sign of life (${last}); ${check.lastSeq + 1} events read; ${ledger.ownerNote(owner)}`,
      });
      return;
    }
    const headers: Record<string, string> = check.lastSeq >= 0 ? { 'Last-Event-ID': String(check.lastSeq) } : {};
    let opened;
    try {
      opened = await openEvents(url, headers, AbortSignal.timeout(Math.max(1, deadline - Date.now())));
    } catch (err) {
      if ((err as Error).name !== 'TimeoutError') {
        const e = noAnswer(err);
        ledger.error('resource', e.kind, e.text, e.acceptable);
        last = e.text;
        await new Promise((r) => setTimeout(r, 200));
      }
      continue;
    }
    if (opened.status === 204) {
      // Every event read and the call settled, but the response frame was cut off: read the result.
      const res = await fetch(`${t.url}/tool/calls/${id}`, { signal: AbortSignal.timeout(10_000) }).catch(
        () => undefined,
      );
      const body = res?.status === 200 ? await res.json() : undefined;
      if (body?.result) return final(body.result, String(body.events));
      last = `204, then GET answered ${res?.status}`;
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    if (!('next' in opened)) {
      const e = httpError(opened.status, opened.body);
      ledger.error('resource', e.kind, e.text, e.acceptable);
      last = `${e.kind}: ${e.text}`;
      if (opened.status === 404) {
        ledger.outcome('resource', 'lost', {
          id,
          note: `call ${id}: ${last}; ${check.lastSeq + 1} events read; ${ledger.ownerNote(owner)}`,
        });
        return;
      }
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    if (check.lastSeq >= 0) ledger.events.resumes++;
    for (;;) {
      const frame = await opened.next(deadline);
      if (frame === 'timeout') {
        opened.close();
        break;
      }
      if (frame === 'end') {
        last = `stream cut after event ${check.lastSeq} at ${t.at(Date.now())}`;
        await new Promise((r) => setTimeout(r, 100));
        break;
      }
      deadline = Date.now() + t.answerWithinMs;
      const msg = JSON.parse(frame.data);
      if (frame.event === 'tool/event') {
        const gap = gapOf(msg);
        if (gap) check.announce(gap.from, gap.to);
        else check.add(msg.seq, isTick(msg));
        owner = pidOf(msg) ?? owner;
        if (!cutDone && check.lastSeq >= cutAt) {
          // Cut on purpose: the next connection goes to another instance (round-robin).
          cutDone = true;
          opened.close();
          break;
        }
      } else if (frame.event === 'tool/call/resp') {
        opened.close();
        return final(msg, frame.id);
      } else if (frame.event === 'tool/error') {
        const e = a2eError(msg);
        ledger.error('resource', `stream ${e.kind}`, e.text, e.acceptable);
        last = `${e.kind}: ${e.text}`;
      }
    }
  }
}
