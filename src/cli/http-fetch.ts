/**
 * The `fetch` the CLI's client commands give ToolAPI: node:http(s) answered
 * as a standard Response. Node's global fetch loads undici and compiles its
 * WebAssembly HTTP parser on the first request, which costs a short-lived
 * command like `a2e-gateway list` more than everything else it does. It
 * fails like the global fetch: a TypeError "fetch failed" whose cause carries
 * the network error's code, the signal's reason on an abort, and a body that
 * breaks off with a TypeError "terminated".
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';

/** Statuses whose Response may not have a body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export async function cliFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const req = input instanceof Request && init === undefined ? input : new Request(input, init);
  const signal = req.signal;
  const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
  signal.throwIfAborted();
  const headers: Record<string, string> = {};
  req.headers.forEach((value, name) => (headers[name] = value));
  if (body) headers['content-length'] = String(body.length);
  const url = new URL(req.url);
  // node:https (and tls) only for an https gateway: loading them costs a plain-http command more than its request.
  const send = url.protocol === 'https:' ? process.getBuiltinModule('node:https').request : httpRequest;

  return new Promise<Response>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      outgoing.destroy();
    };
    const outgoing = send(url, { method: req.method, headers }, (res) => {
      signal.removeEventListener('abort', onAbort);
      const responseHeaders = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
        responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
      const init = { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: responseHeaders };
      if (NULL_BODY.has(init.status) || req.method === 'HEAD') {
        res.resume();
        resolve(new Response(null, init));
      } else {
        resolve(new Response(bodyStream(res, signal), init));
      }
    });
    outgoing.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(new TypeError('fetch failed', { cause: err }));
    });
    signal.addEventListener('abort', onAbort, { once: true });
    outgoing.end(body);
  });
}

/** The response body as a web stream, read as it arrives (an SSE answer's events too), paused when the reader falls behind. */
function bodyStream(res: IncomingMessage, signal: AbortSignal): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let done = false;
      const fail = (reason: unknown) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        controller.error(reason);
        res.destroy();
      };
      const onAbort = () => fail(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      res.on('data', (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) res.pause();
      });
      res.on('end', () => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        controller.close();
      });
      res.on('error', (err) => fail(new TypeError('terminated', { cause: err })));
      res.on('close', () => {
        if (!res.complete) fail(new TypeError('terminated', { cause: new Error('other side closed') }));
      });
    },
    pull() {
      res.resume();
    },
    cancel() {
      res.destroy();
    },
  });
}
