/**
 * Hand-written A2A peers over real HTTP (node:http), shaped like the stub
 * peers of the reference's examples: a card, and JSON-RPC answered by a
 * handler. Every request is recorded.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The client's port: the same for requests sharing a keep-alive connection. */
  clientPort: number;
  /** Parsed JSON-RPC body (POST), or undefined. */
  rpc: { id?: unknown; method?: string; params?: any } | undefined;
  /** Whether the connection that carried this request has been closed (by either side). */
  connectionClosed(): boolean;
}

/** `sse` events are written at once; the stream ends then, or when `holdUntil` resolves. */
export type StubAnswer =
  | { status?: number; json?: unknown; text?: string; sse?: unknown[]; holdUntil?: Promise<unknown> }
  | undefined;

export interface Stub {
  url: string;
  port: number;
  requests: StubRequest[];
  /** JSON-RPC method names received, in order. */
  methods(): string[];
  close(): Promise<void>;
}

/**
 * Start a peer. `handle` answers each request (undefined → 404). `port`
 * lets a test bring a peer up on a port that was down before.
 */
export async function startStub(
  handle: (req: StubRequest) => StubAnswer | Promise<StubAnswer>,
  port = 0,
): Promise<Stub> {
  const requests: StubRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let rpc: StubRequest['rpc'];
    try {
      rpc = raw ? JSON.parse(raw) : undefined;
    } catch {
      rpc = undefined;
    }
    const r: StubRequest = {
      method: req.method ?? 'GET',
      path: new URL(req.url ?? '/', 'http://x').pathname,
      headers: req.headers,
      clientPort: req.socket.remotePort ?? 0,
      rpc,
      connectionClosed: () => req.socket.destroyed,
    };
    requests.push(r);
    const answer = await handle(r);
    if (!answer) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (answer.sse) {
      res.writeHead(answer.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const item of answer.sse) res.write(`data: ${JSON.stringify(item)}\n\n`);
      await answer.holdUntil;
      res.end();
      return;
    }
    if (answer.text !== undefined) {
      res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain' }).end(answer.text);
      return;
    }
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    requests,
    methods: () => requests.flatMap((r) => (r.rpc?.method ? [r.rpc.method] : [])),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A JSON-RPC success answer. */
export const rpcResult = (req: StubRequest, result: unknown): StubAnswer => ({
  json: { jsonrpc: '2.0', id: req.rpc?.id ?? null, result },
});
/** A JSON-RPC error answer. */
export const rpcError = (req: StubRequest, code: number, message: string): StubAnswer => ({
  json: { jsonrpc: '2.0', id: req.rpc?.id ?? null, error: { code, message } },
});

/** Poll `check` until it returns a truthy value, or fail after `timeoutMs` naming `what`. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  everyMs = 25,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
