/** Helpers for the security suites: gateways with a captured log, raw HTTP, leak checks. */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import type { GatewayConfigInput, ToolPlugin } from '../../src/index.js';
import { LogCapture } from '../helpers/log-capture.js';
import { definePlugin, deferred, echoTool, sleep } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export { LogCapture };

export interface SecureGateway extends TestGateway {
  log: LogCapture;
}

/** A gateway (helpers/server.ts startGateway) logging at debug into a LogCapture, reading no environment unless given one. */
export async function startSecureGateway(
  options: { config?: GatewayConfigInput; plugins?: ToolPlugin[]; env?: NodeJS.ProcessEnv; host?: string } = {},
): Promise<SecureGateway> {
  const log = new LogCapture();
  const gw = await startGateway({
    ...options,
    plugins: options.plugins ?? [testTools()],
    logger: log.logger,
    env: options.env ?? {},
  });
  return { ...gw, log };
}

/** Tools for the security suites: echo, one per tag/kind, and a call that waits until released. */
export function testTools(): ToolPlugin {
  return definePlugin('sec', [
    echoTool,
    [{ name: 'read_notes', description: 'Read the notes', tags: ['fs', 'read'] }, () => ({ notes: 'n' })],
    [{ name: 'write_notes', description: 'Write the notes', tags: ['fs', 'write'] }, () => ({ ok: true })],
    [{ name: 'run_cmd', description: 'Run a command', tags: ['shell'], kind: 'shell' }, () => ({ ran: true })],
    [
      {
        name: 'hold',
        description: 'Runs until released (or stopped)',
        input_parameters: [{ name: 'ms', type: 'integer', description: 'max time', required: true }],
      },
      async (args, ctx) => {
        await Promise.race([held.promise, sleep(Number(args.ms), ctx.signal)]);
        return { held: true };
      },
    ],
    [
      {
        name: 'args',
        description: 'Returns what it got, and whether its arguments object looks normal',
        input_parameters: [
          { name: 'meta', type: 'object', description: 'free-form' },
          { name: 'list', type: 'array', description: 'free-form' },
          { name: 'text', type: 'string', description: 'free-form' },
        ],
      },
      (args) => ({
        keys: Object.keys(args),
        plainPrototype: Object.getPrototypeOf(args) === Object.prototype,
        metaPrototype: args.meta === undefined ? null : Object.getPrototypeOf(args.meta) === Object.prototype,
        polluted: ({} as Record<string, unknown>).polluted ?? null,
      }),
    ],
  ]);
}

let held = deferred();
/** Let every running `hold` call finish. */
export function releaseHeld(): void {
  held.resolve();
  held = deferred();
}

/** POST a JSON body (or raw bytes) and read the answer: the shared helper. */
export { postJson as post } from '../helpers/server.js';

/** A request with headers fetch() will not let us set (Host), via node:http. */
export function rawRequest(
  url: string,
  options: { method?: string; path: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: options.method ?? 'POST',
        path: options.path,
        headers: options.headers,
        setHost: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Open a TCP connection and write `head`; resolves with what the server sent and how long until it closed. */
export function slowClient(
  url: string,
  head: string,
): { socket: Socket; closed: Promise<{ ms: number; received: string }> } {
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  const started = performance.now();
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.write(head);
  const closed = new Promise<{ ms: number; received: string }>((resolve) => {
    socket.on('close', () => resolve({ ms: performance.now() - started, received }));
    socket.on('error', () => {});
  });
  return { socket, closed };
}

/** Pids of this process's children, read from /proc (a tool that leaked a process would show here). */
export function childPids(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Field 4 (ppid) comes after the parenthesised command name, which may hold spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Names in a directory, to check that nothing was written next to the workspace. */
export function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

export const plainTools = () => definePlugin('plain', [echoTool]);
