/** A small GET/POST through a dispatcher (its address rules: a spec, a token endpoint), the answer's text read up to a byte cap. */
import type { Dispatcher } from 'undici';

const TIMEOUT_MS = 30_000;

export async function readBounded(
  dispatcher: Dispatcher,
  url: URL,
  maxBytes: number,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; text: string }> {
  const res = await dispatcher.request({
    origin: url.origin,
    path: url.pathname + url.search,
    method: init.method ?? 'GET',
    headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5', ...init.headers },
    body: init.body,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      res.body.destroy();
      throw new Error(`${url.host} answered with more than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return { status: res.statusCode, text: Buffer.concat(chunks, bytes).toString('utf8') };
}
