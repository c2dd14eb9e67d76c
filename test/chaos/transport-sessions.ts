/**
 * A2E transport sessions in a chaos run, the way the reference SDK's client
 * uses them, through nginx: `POST /a2e/v1/session`, `GET /stream` (reopened
 * with Last-Event-ID whenever it is cut, and on purpose every few dozen
 * frames, so it resumes on whichever instance nginx picks), a handshake,
 * then `tool/call/req` messages on `POST /send`, two at a time. Every frame
 * id of a session is checked (0, 1, 2, … each once), every call's events
 * too, and each call ends ok, failed visibly, or lost (no answer on the
 * stream within `answerWithinMs` of its last frame). A session the gateway
 * no longer knows (404) is replaced by a new one; the calls that were
 * waiting on it count as failed, the 404 as the error they saw. Told its
 * handshake is gone, the client handshakes again before its next call.
 */
import { randomUUID } from 'node:crypto';
import { a2eError, httpError, noAnswer, toolFailure, type Classified } from './client-errors.js';
import { SeqCheck } from './ledger.js';
import { openEvents } from './sse-reader.js';
import { gapOf, isTick, pidOf, ticker, type Traffic } from './traffic.js';

const TICKS = 12;
const EVERY_MS = 60;
const CALLS_PER_SESSION = 2;

interface Pending {
  startedAt: number;
  /** The pid of the instance running it, from its events. */
  owner?: number;
  events: SeqCheck;
  deadline: number;
  /** Set when POST /send got no clear acceptance (e.g. nginx's 502): the call may never have started. */
  sendFailed?: Classified;
  done(outcome: 'ok' | 'failed' | 'lost', error?: Classified, note?: string): void;
}

export async function transportSessions(t: Traffic, sessions: number): Promise<void> {
  await Promise.all(Array.from({ length: sessions }, () => sessionLoop(t)));
}

async function sessionLoop(t: Traffic): Promise<void> {
  while (Date.now() < t.untilMs) {
    const session = await Session.open(t);
    if (!session) continue;
    await Promise.all(Array.from({ length: CALLS_PER_SESSION }, () => callLoop(t, session)));
    await session.close();
  }
}

async function callLoop(t: Traffic, session: Session): Promise<void> {
  while (Date.now() < t.untilMs && !session.lost) {
    // Told the handshake is gone ("send handshake/req again"): do as told before the next call.
    if (session.needsHandshake && !(await session.handshake())) {
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    await session.call();
  }
}

class Session {
  readonly pending = new Map<string, Pending>();
  /** Answers awaited by request() (the handshake), by req id. */
  private readonly replies = new Map<string, (m: any) => void>();
  /** req ids already answered: a frame for one of them is a duplicate. */
  private readonly answered = new Set<string>();
  private readonly frames: SeqCheck;
  private lastEventId: string | undefined;
  /** Error frames for no request of ours (e.g. "Redis lost its data, … send again a request that gets no answer"), with when they came. */
  private readonly notices: string[] = [];
  private readonly stop = new AbortController();
  private reading: Promise<void>;
  lost = false;
  /** A call was refused as `unauthorized`: the session's handshake is gone. */
  needsHandshake = false;
  private handshaking: Promise<boolean> | undefined;

  private constructor(
    private readonly t: Traffic,
    readonly id: string,
  ) {
    this.frames = new SeqCheck(t.ledger, t.ledger.frames, `session ${id}`);
    this.reading = this.read();
  }

  private get base(): string {
    return `${this.t.url}/a2e/v1`;
  }

  /** A new session with its stream open and its handshake done, or undefined after a visible failure. */
  static async open(t: Traffic): Promise<Session | undefined> {
    const fail = async (e: Classified) => {
      t.ledger.error('transport', e.kind, e.text, e.acceptable);
      await new Promise((r) => setTimeout(r, 250));
      return undefined;
    };
    let res: Response;
    try {
      res = await fetch(`${t.url}/a2e/v1/session`, { method: 'POST', signal: AbortSignal.timeout(t.answerWithinMs) });
    } catch (err) {
      return fail(noAnswer(err));
    }
    const body = await res.text();
    if (res.status !== 200) return fail(httpError(res.status, body));
    const session = new Session(t, JSON.parse(body).session_id as string);
    t.ledger.sessionsOpened++;
    if (await session.handshake()) return session;
    await session.close();
    await new Promise((r) => setTimeout(r, 250));
    return undefined;
  }

  /** Send handshake/req and wait for its answer (one at a time); a failure is an error the client saw. */
  handshake(): Promise<boolean> {
    this.handshaking ??= (async () => {
      const hs = await this.request({
        type: 'handshake/req',
        agent_id: 'chaos',
        agent_caps: ['tools'],
        auth_token: '',
      });
      this.handshaking = undefined;
      if (hs?.type === 'handshake/resp' && hs.ok === true) {
        this.needsHandshake = false;
        return true;
      }
      const e =
        hs?.type === 'error'
          ? a2eError(hs)
          : { kind: 'handshake', text: JSON.stringify(hs ?? 'no answer').slice(0, 240), acceptable: false };
      this.t.ledger.error('transport', e.kind, e.text, e.acceptable);
      return false;
    })();
    return this.handshaking;
  }

  /** A message that is not a call (the handshake): its first answer, or undefined. */
  private async request(message: Record<string, unknown>): Promise<any> {
    const id = randomUUID().replaceAll('-', '');
    let answer: any;
    const waiting = new Promise<void>((resolve) => {
      this.replies.set(id, (m) => {
        answer = m;
        resolve();
      });
    });
    const sent = await this.send({ ...message, id }).catch(() => undefined);
    if (sent?.status === 202) await Promise.race([waiting, new Promise((r) => setTimeout(r, this.t.answerWithinMs))]);
    this.replies.delete(id);
    return answer;
  }

  private async send(message: Record<string, unknown>): Promise<{ status: number; body: string }> {
    const res = await fetch(`${this.base}/send`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', 'X-Session-Id': this.id },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(this.t.answerWithinMs),
    });
    return { status: res.status, body: await res.text() };
  }

  /** One ticker call on this session, followed to its outcome. */
  async call(): Promise<void> {
    const { ledger } = this.t;
    const id = randomUUID().replaceAll('-', '');
    ledger.started('transport');
    let settle!: () => void;
    const settled = new Promise<void>((r) => (settle = r));
    const pending: Pending = {
      startedAt: Date.now(),
      events: new SeqCheck(ledger, ledger.events, `transport call ${id}`),
      deadline: Date.now() + this.t.answerWithinMs,
      done: (outcome, error, note) => {
        if (!this.pending.delete(id)) return;
        this.answered.add(id);
        if (error) ledger.error('transport', error.kind, error.text, error.acceptable);
        ledger.outcome('transport', outcome, note === undefined ? undefined : { id, note });
        settle();
      },
    };
    this.pending.set(id, pending);
    let sent: { status: number; body: string } | undefined;
    try {
      sent = await this.send({ type: 'tool/call/req', id, ...ticker(TICKS, EVERY_MS), streaming: true });
    } catch (err) {
      pending.sendFailed = noAnswer(err);
    }
    if (sent && sent.status !== 202) {
      const e = httpError(sent.status, sent.body);
      if (sent.status === 404) this.markLost(e);
      else if (sent.status === 502 || sent.status === 504)
        pending.sendFailed = e; // it may still have started: wait for an answer
      else {
        pending.done('failed', e);
        // Refused (e.g. 503 while Redis is down): give it a moment rather than spinning on refusals.
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    while (this.pending.has(id)) {
      if (Date.now() >= pending.deadline) {
        if (pending.sendFailed) pending.done('failed', pending.sendFailed);
        else {
          pending.done(
            'lost',
            undefined,
            `transport call ${id} on session ${this.id}, sent at ${this.t.at(pending.startedAt)} (POST /send answered ${sent?.status}): ` +
              `no tool/call/resp within ${this.t.answerWithinMs} ms of its last frame (${this.t.at(pending.deadline - this.t.answerWithinMs)}); ${pending.events.lastSeq + 1} events read; ` +
              ledger.ownerNote(pending.owner) +
              (this.notices.length ? `; the session's notices: ${this.notices.join(', ')}` : ''),
          );
        }
        break;
      }
      await Promise.race([settled, new Promise((r) => setTimeout(r, 250))]);
    }
  }

  /** The session answered 404: the gateway lost it. Its waiting calls failed with that. */
  private markLost(e: Classified): void {
    if (this.lost) return;
    this.lost = true;
    this.t.ledger.sessionsLost++;
    this.t.ledger.error('transport', e.kind, e.text, e.acceptable);
    for (const p of [...this.pending.values()]) p.done('failed');
    this.stop.abort();
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.reading;
    for (const p of [...this.pending.values()])
      p.done('lost', undefined, `transport call on session ${this.id}: still unanswered when the session was closed`);
  }

  private async read(): Promise<void> {
    const ledger = this.t.ledger;
    let first = true;
    while (!this.stop.signal.aborted) {
      const headers: Record<string, string> = { 'X-Session-Id': this.id };
      if (this.lastEventId !== undefined) headers['Last-Event-ID'] = this.lastEventId;
      let opened;
      try {
        opened = await openEvents(`${this.base}/stream`, headers, this.stop.signal);
      } catch (err) {
        if (this.stop.signal.aborted) return;
        const e = noAnswer(err);
        ledger.error('transport', `stream ${e.kind}`, e.text, e.acceptable);
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      if (!('next' in opened)) {
        const e = httpError(opened.status, opened.body);
        if (opened.status === 404) return this.markLost(e);
        ledger.error('transport', `stream ${e.kind}`, e.text, e.acceptable);
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      if (!first) ledger.frames.resumes++;
      first = false;
      // Besides the cuts a kill makes, this connection is dropped on purpose after a few dozen frames: the
      // reconnect goes to another instance (round-robin) and resumes there.
      let cutIn = 15 + Math.floor(this.t.random() * 45);
      for (;;) {
        const frame = await opened.next(Date.now() + 60_000);
        if (frame === 'timeout') continue;
        if (frame === 'end') break;
        if (frame.id !== undefined) {
          this.lastEventId = frame.id;
          this.frames.add(Number(frame.id));
        }
        this.dispatch(JSON.parse(frame.data));
        if (--cutIn === 0) {
          opened.close();
          break;
        }
      }
      if (!this.stop.signal.aborted) await new Promise((r) => setTimeout(r, 100));
    }
  }

  private dispatch(m: any): void {
    const reqId = String(m.req_id ?? '');
    const reply = this.replies.get(reqId);
    if (reply) return reply(m);
    const p = this.pending.get(reqId);
    if (!p && m.type === 'error' && !this.answered.has(reqId)) {
      // A notice to the session as a whole: an error the client saw, kept to say what a lost call had been told.
      const e = a2eError(m);
      this.t.ledger.error('transport', `session notice ${e.kind}`, e.text, e.acceptable);
      // Frames lost with Redis's data that no instance had to push again: named, so counted as announced.
      const lost = m.detail?.lost_frames;
      if (typeof lost?.from === 'number' && typeof lost?.to === 'number') this.frames.announce(lost.from, lost.to);
      this.notices.push(`${this.t.at(Date.now())} ${String(m.code)}`);
      return;
    }
    if (!p) {
      if (this.answered.has(reqId)) {
        this.t.ledger.events.duplicated++;
        this.t.ledger.note(this.t.ledger.events, `transport call ${reqId}: a ${m.type} frame after its answer`);
      }
      return;
    }
    p.deadline = Date.now() + this.t.answerWithinMs;
    if (m.type === 'tool/event') {
      const gap = gapOf(m);
      if (gap) p.events.announce(gap.from, gap.to);
      else p.events.add(m.seq, isTick(m));
      p.owner = pidOf(m) ?? p.owner;
    } else if (m.type === 'tool/call/resp') {
      if (m.data?.success === true) {
        p.events.end(TICKS);
        if (m.data.data?.ticks === TICKS) p.done('ok');
        else
          p.done('failed', {
            kind: 'wrong result',
            text: JSON.stringify(m.data.data).slice(0, 240),
            acceptable: false,
          });
      } else {
        p.done('failed', toolFailure(m.data ?? {}, this.t.ledger.instanceDied(p.owner, p.startedAt)));
      }
    } else if (m.type === 'error') {
      if (m.code === 'unauthorized') this.needsHandshake = true;
      p.done('failed', a2eError(m));
    }
  }
}
