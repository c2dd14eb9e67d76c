/** Start a real gateway on an ephemeral port for a test, and talk to it. */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import {
  createGateway,
  defineConfig,
  createLogger,
  type Gateway,
  type GatewayConfigInput,
  type Logger,
  type ToolPlugin,
} from '../../src/index.js';

export interface TestGateway {
  url: string;
  port: number;
  gateway: Gateway;
  close(): Promise<void>;
}

/**
 * The one way tests start a gateway in-process. `logger`: where it logs (a LogCapture's, to read the log back; silent
 * unless TEST_LOG_LEVEL says otherwise); `env`: the environment it reads (`token_env` and the like; default process.env); `host`: where it listens.
 */
export async function startGateway(
  options: {
    config?: GatewayConfigInput;
    plugins?: ToolPlugin[];
    logger?: Logger;
    env?: NodeJS.ProcessEnv;
    host?: string;
  } = {},
): Promise<TestGateway> {
  // Native tool groups are off unless a test configures them (e.g. `tools: { fs: { root } }`): core tests see only their own plugins.
  const nativeOff = {
    fs: { enabled: false },
    shell: { enabled: false },
    http: { enabled: false },
    eval: { enabled: false },
  };
  const config = defineConfig({
    ...options.config,
    tools: { ...nativeOff, ...options.config?.tools },
    server: { port: 0, ...options.config?.server },
  });
  const gateway = await createGateway({
    config,
    plugins: options.plugins ?? [],
    logger: options.logger ?? createLogger((process.env.TEST_LOG_LEVEL as 'silent' | undefined) ?? 'silent'),
    ...(options.env && { env: options.env }),
  });
  const { url, port } = await gateway.listen(undefined, options.host);
  return { url, port, gateway, close: () => gateway.close() };
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? (body as BodyInit) : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json };
}

export interface ReceivedEvent extends EventSourceMessage {
  /** performance.now() when the event was parsed. */
  at: number;
  json: any;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Resolves with each event as it arrives (null at the end of the stream). */
  next(): Promise<ReceivedEvent | null>;
  /** Read every remaining event. */
  rest(): Promise<ReceivedEvent[]>;
  comments: string[];
  /** Drop the connection. */
  abort(): void;
}

/** Open an SSE response with fetch and parse it with a real SSE parser. */
export async function openSse(url: string, init: RequestInit = {}): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    ...init,
    signal: controller.signal,
    headers: { Accept: 'text/event-stream', ...init.headers },
  });
  const queue: (ReceivedEvent | null)[] = [];
  const waiters: ((e: ReceivedEvent | null) => void)[] = [];
  const comments: string[] = [];
  const push = (e: ReceivedEvent | null) => {
    const w = waiters.shift();
    if (w) w(e);
    else queue.push(e);
  };
  const parser = createParser({
    onEvent: (e) => {
      let json: unknown;
      try {
        json = JSON.parse(e.data);
      } catch {
        json = undefined;
      }
      push({ ...e, at: performance.now(), json });
    },
    onComment: (c) => comments.push(c),
  });
  (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted
    }
    push(null);
  })();
  const next = () =>
    new Promise<ReceivedEvent | null>((resolve) => (queue.length ? resolve(queue.shift()!) : waiters.push(resolve)));
  return {
    status: res.status,
    headers: res.headers,
    next,
    async rest() {
      const out: ReceivedEvent[] = [];
      for (let e = await next(); e; e = await next()) out.push(e);
      return out;
    },
    comments,
    abort: () => controller.abort(),
  };
}

export const callBody = (tool_name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'tool/call/req',
  tool_name,
  arguments: args,
  ...extra,
});
