/**
 * The stdio transport to one MCP server process. Like the SDK's
 * StdioClientTransport, but the process gets its own process group, so
 * closing it stops the whole tree (an `npx` wrapper and the server it runs),
 * and it dies with the gateway (setpriv --pdeathsig, where available).
 * stdout carries only JSON-RPC: a line that is not is reported and skipped.
 * A line over `maxMessageBytes` is not kept (utils/capped-lines.ts): a
 * response fails its own call (oversized-message.ts), anything else is
 * reported and skipped; reading resyncs at the next newline. A line that
 * goes on past UNENDING_LINE times the limit never resyncs in practice (a
 * server writing without end): the process is stopped, and so restarted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { CappedLines } from '../utils/capped-lines.js';
import { JsonRpcIdScan, tooLargeAnswer } from './oversized-message.js';

const SETPRIV = '/usr/bin/setpriv';
/** A line this many times over mcp.max_message_bytes is taken for one that never ends. */
const UNENDING_LINE = 16;

export interface StdioServerSpec {
  /** Program and arguments. */
  file: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string;
  /** The command line already makes the process die with the gateway (the sandbox's does). */
  diesWithParent?: boolean;
  /** Each line the process writes to stderr. */
  onStderr(line: string): void;
  /** Largest message read from stdout, bytes (mcp.max_message_bytes). */
  maxMessageBytes: number;
  /** The server's id, in the error that takes an oversized answer's place. */
  serverId: string;
}

export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private readonly lines: CappedLines;
  private exited: Promise<void> | undefined;
  /** Exit code or signal, once the process is gone (or why the gateway stopped it). */
  exitStatus: string | undefined;
  private stoppedBecause: string | undefined;

  constructor(private readonly spec: StdioServerSpec) {
    this.lines = this.readLines(spec.maxMessageBytes);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    const { file, args, env, cwd } = this.spec;
    const [program, argv] =
      !this.spec.diesWithParent && existsSync(SETPRIV)
        ? [SETPRIV, ['--pdeathsig', 'KILL', '--', file, ...args]]
        : [file, [...args]];
    const child = spawn(program, argv, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child = child;
    this.exited = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.exitStatus = this.stoppedBecause ?? (signal ? `killed by ${signal}` : `exit code ${code}`);
        this.child = undefined;
        resolve();
        this.onclose?.();
      }),
    );
    // Whatever the process left behind in its group (a wrapper's child) goes with it.
    child.once('exit', () => killGroup(child, 'SIGKILL'));
    child.stdout!.on('data', (chunk: Buffer) => this.lines.push(chunk));
    let partial = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      if (partial.length > 8192) {
        lines.push(partial);
        partial = '';
      }
      for (const line of lines) if (line.trim()) this.spec.onStderr(line.slice(0, 8192));
    });
    child.stdin!.on('error', (err) => this.onerror?.(err));
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => {
        reject(new Error(`could not start "${file}": ${(err as NodeJS.ErrnoException).code ?? err.message}`));
      });
    });
  }

  /** stdout's lines as messages; an oversized one in the scan that finds the call it answers. */
  private readLines(maxBytes: number): CappedLines {
    let scan: JsonRpcIdScan | undefined;
    /** Set once the oversized message's call has its answer (as soon as its id is certain). */
    let answered = false;
    const answer = (id: RequestId, bytes: number | undefined) => {
      answered = true;
      this.onerror?.(
        new Error(
          `the server wrote a message of ${bytes ?? `more than ${maxBytes}`} bytes, over mcp.max_message_bytes (${maxBytes}); it was dropped and its call failed`,
        ),
      );
      this.onmessage?.(tooLargeAnswer(id, bytes, maxBytes, this.spec.serverId));
    };
    /** Bytes of the oversized line so far. */
    let skipped = 0;
    const look = (bytes: Buffer) => {
      skipped += bytes.length;
      if (skipped > UNENDING_LINE * maxBytes && !this.stoppedBecause) {
        const why = `it wrote more than ${UNENDING_LINE * maxBytes} bytes without ending the line`;
        this.stoppedBecause = `stopped by the gateway: ${why}`;
        this.onerror?.(new Error(`the server ${why}; stopping it (it is started again)`));
        this.kill();
      }
      if (answered || this.stoppedBecause) return;
      scan!.feed(bytes);
      if (scan!.settled && scan!.responseId !== undefined) answer(scan!.responseId, undefined);
    };
    return new CappedLines(maxBytes, {
      line: (bytes) => {
        if (bytes.length === 0) return; // a blank line (its \r is gone already)
        let message: JSONRPCMessage;
        try {
          message = deserializeMessage(bytes.toString('utf8'));
        } catch (err) {
          this.onerror?.(
            new Error(
              `the server wrote a line on stdout that is not a JSON-RPC message (${(err as Error).message.slice(0, 200)}); skipped`,
            ),
          );
          return;
        }
        this.onmessage?.(message);
      },
      overflow: (head) => {
        scan = new JsonRpcIdScan();
        answered = false;
        skipped = 0;
        look(head);
      },
      overflowPart: look,
      overflowEnd: (bytes) => {
        const id = scan!.responseId;
        scan = undefined;
        if (answered) return;
        if (id !== undefined) return answer(id, bytes);
        this.onerror?.(
          new Error(
            `the server wrote a message of ${bytes} bytes on stdout, over mcp.max_message_bytes (${maxBytes}) and not an answer to a call; skipped`,
          ),
        );
      },
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error('the server process is not running'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Stop the whole process group: close stdin, then SIGTERM, then SIGKILL. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.exited) return;
    const gone = this.exited;
    const wait = (ms: number) =>
      Promise.race([gone.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    child.stdin?.end();
    if (await wait(1000)) return;
    killGroup(child, 'SIGTERM');
    if (await wait(2000)) return;
    killGroup(child, 'SIGKILL');
    await wait(2000);
  }

  /** Kill at once (the process is misbehaving or the gateway is going away). */
  kill(): void {
    if (this.child) killGroup(this.child, 'SIGKILL');
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}
