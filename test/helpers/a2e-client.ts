/**
 * A test client of the A2E HTTP message transport that follows the rules
 * the reference A2E SDK follows: POST /session, then open GET /stream and
 * send the handshake at the same moment; every message goes to POST /send
 * as text/plain; frames are read with a real SSE parser and answers are
 * matched to requests by req_id. Like the reference client it reconnects
 * without Last-Event-ID unless asked to send one.
 */
import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';

export interface A2eMessage {
  type: string;
  req_id?: string;
  [key: string]: any;
}

export interface Exchange {
  /** tool/event frames carrying the request's id, in arrival order. */
  events: A2eMessage[];
  /** The answer: the first frame for the request's id that is not a tool/event. */
  response: A2eMessage;
  /** Frames for the request's id that arrived after the answer (must stay empty). */
  late(): A2eMessage[];
}

interface Waiter {
  match: (m: A2eMessage) => boolean;
  resolve: (m: A2eMessage) => void;
}

export class A2eTestClient {
  /** Every message received on any stream of this session, in order. */
  readonly received: A2eMessage[] = [];
  /** The last SSE id seen. */
  lastEventId: string | undefined;
  /** Raw text of the frames' data fields (for byte-level checks). */
  readonly rawData: string[] = [];
  /** The SSE id of each frame received, in order. */
  readonly frameIds: string[] = [];
  streamResponse: Response | undefined;
  private waiters: Waiter[] = [];
  private controller: AbortController | undefined;
  private reading: Promise<void> | undefined;

  /** Where POST /send goes and where GET /stream is opened (default `base`; scale-out tests point them at different instances). */
  sendTo: string;
  streamFrom: string;

  private constructor(
    readonly base: string,
    readonly sessionId: string,
    /** Sent with every request of this client (e.g. Authorization). */
    readonly headers: Record<string, string> = {},
  ) {
    this.sendTo = base;
    this.streamFrom = base;
  }

  /** POST /session (with `headers`, e.g. a bearer token, on it and on every later request). */
  static async open(base: string, headers: Record<string, string> = {}): Promise<A2eTestClient> {
    const res = await fetch(`${base}/session`, { method: 'POST', headers });
    if (res.status !== 200) throw new Error(`POST /session answered ${res.status}: ${await res.text()}`);
    const { session_id } = (await res.json()) as { session_id: string };
    return new A2eTestClient(base, session_id, headers);
  }

  /** Another client of an existing session (e.g. a second reader of its stream). */
  static forSession(base: string, sessionId: string, headers: Record<string, string> = {}): A2eTestClient {
    return new A2eTestClient(base, sessionId, headers);
  }

  /** Open a session, then open the stream and send the handshake concurrently. */
  static async connect(
    base: string,
    handshake: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): Promise<{ client: A2eTestClient; handshake: Exchange }> {
    const client = await A2eTestClient.open(base, headers);
    const [, hs] = await Promise.all([
      client.openStream(),
      client.request({
        type: 'handshake/req',
        agent_id: 'test-agent',
        agent_caps: ['tools'],
        auth_token: '',
        ...handshake,
      }),
    ]);
    return { client, handshake: hs };
  }

  /** GET /stream; resolves once the response headers are in. Frames are parsed as they arrive. */
  async openStream(options: { lastEventId?: string } = {}): Promise<Response> {
    const controller = new AbortController();
    const headers: Record<string, string> = {
      ...this.headers,
      'X-Session-Id': this.sessionId,
      Accept: 'text/event-stream',
    };
    if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId;
    const res = await fetch(`${this.streamFrom}/stream`, { headers, signal: controller.signal });
    this.streamResponse = res;
    if (res.status !== 200) return res;
    this.controller = controller;
    const parser = createParser({
      onEvent: (e) => {
        if (e.id !== undefined) this.lastEventId = e.id;
        this.frameIds.push(e.id ?? '');
        this.rawData.push(e.data);
        this.deliver(JSON.parse(e.data) as A2eMessage);
      },
    });
    this.reading = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
          parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted by dropStream()
      }
    })();
    return res;
  }

  /** Drop the stream's connection (as a network failure would). */
  async dropStream(): Promise<void> {
    this.controller?.abort();
    await this.reading;
    this.controller = undefined;
  }

  /** Resolves when the server ends the stream. */
  streamEnded(): Promise<void> {
    return this.reading ?? Promise.resolve();
  }

  /** POST /send, as the reference client does: text/plain, one JSON message. */
  async send(
    message: Record<string, unknown> | string,
    headers: Record<string, string> = { ...this.headers, 'X-Session-Id': this.sessionId },
  ): Promise<Response> {
    return fetch(`${this.sendTo}/send`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', ...headers },
      body: typeof message === 'string' ? message : JSON.stringify(message),
    });
  }

  /** Send a request and wait for its answer on the stream. */
  async request(message: Record<string, unknown>, timeoutMs = 20_000): Promise<Exchange> {
    const id = (message.id as string | undefined) ?? randomUUID().replaceAll('-', '');
    const answered = this.waitFor(
      (m) => m.req_id === id && m.type !== 'tool/event',
      timeoutMs,
      `the answer to ${String(message.type)} ${id}`,
    );
    const res = await this.send({ ...message, id });
    if (res.status < 200 || res.status > 299) throw new Error(`POST /send answered ${res.status}: ${await res.text()}`);
    const response = await answered;
    const at = this.received.indexOf(response);
    return {
      events: this.received.slice(0, at).filter((m) => m.req_id === id && m.type === 'tool/event'),
      response,
      late: () => this.received.slice(at + 1).filter((m) => m.req_id === id),
    };
  }

  /** The first message (already received or still to come) matching `match`. */
  waitFor(match: (m: A2eMessage) => boolean, timeoutMs = 20_000, what = 'a message'): Promise<A2eMessage> {
    const seen = this.received.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(
          new Error(
            `timed out waiting for ${what}; received: ${JSON.stringify(this.received.map((m) => [m.type, m.req_id]))}`,
          ),
        );
      }, timeoutMs);
      const waiter: Waiter = {
        match,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      this.waiters.push(waiter);
    });
  }

  private deliver(m: A2eMessage): void {
    this.received.push(m);
    for (const w of [...this.waiters]) {
      if (w.match(m)) {
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(m);
      }
    }
  }
}
