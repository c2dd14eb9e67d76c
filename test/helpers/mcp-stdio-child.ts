/**
 * `a2e-gateway mcp-stdio` as a real child process (the built dist/cli.js), spoken to in raw newline-delimited
 * JSON-RPC so a test sees every message (notifications included), with `--port 0` so its HTTP API (the console,
 * /admin/approvals) is reachable too. Its stderr carries the listening line.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { CLI } from './cli.js';

export type RpcMessage = Record<string, any>;

export class McpStdioChild {
  private readonly seen: RpcMessage[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(
    readonly proc: ChildProcessWithoutNullStreams,
    /** The HTTP base URL it listens on. */
    readonly url: string,
  ) {
    createInterface({ input: proc.stdout }).on('line', (line) => {
      this.seen.push(JSON.parse(line) as RpcMessage);
      for (const w of this.waiters) w();
    });
  }

  /**
   * Start it with `configFile` (or with `args` after `mcp-stdio`, which must listen: --port), in `cwd`, and
   * initialize the MCP session.
   */
  static async start(configFile: string | { args: string[]; cwd?: string }): Promise<McpStdioChild> {
    const args = typeof configFile === 'string' ? ['--config', configFile, '--port', '0'] : configFile.args;
    const proc = spawn(process.execPath, [CLI, 'mcp-stdio', ...args], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' },
      cwd: typeof configFile === 'string' ? undefined : configFile.cwd,
    });
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      proc.stderr.on('data', (chunk: Buffer) => {
        err += chunk.toString();
        const m = /a2e-gateway listening on (\S+)/.exec(err);
        if (m) resolve(m[1]!);
      });
      proc.once('exit', (code) => reject(new Error(`mcp-stdio exited with ${code} before listening: ${err}`)));
    });
    const child = new McpStdioChild(proc, url);
    child.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    });
    await child.next((m) => m.id === 'init', 'the initialize answer');
    child.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return child;
  }

  send(message: RpcMessage): void {
    this.proc.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** The first message (seen so far or to come) that `match` accepts. */
  next(match: (m: RpcMessage) => boolean, what: string, timeoutMs = 20_000): Promise<RpcMessage> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.seen.find(match);
        if (!found) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; seen: ${JSON.stringify(this.seen)}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Every message seen so far. */
  messages(): readonly RpcMessage[] {
    return this.seen;
  }

  /** End stdin (the gateway then finishes and exits). */
  async close(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = once(this.proc, 'exit');
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill('SIGTERM'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
