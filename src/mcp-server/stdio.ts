/**
 * The MCP door over stdio: newline-delimited JSON-RPC on stdin/stdout, for a
 * desktop MCP client that launches the gateway (`a2e-gateway mcp-stdio`).
 * stdout carries only protocol messages; logs go to stderr.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Caller, Logger } from '../engine/index.js';
import { JSONRPC_PARSE_ERROR, ProgressNotifier, errorMessage, type McpDoor } from './door.js';

export interface McpStdioOptions {
  door: McpDoor;
  input: Readable;
  output: Writable;
  logger: Logger;
  /** Who the local client is (no token on stdio: the gateway's policy still applies). */
  caller: Caller;
}

/** Serve until the input ends; resolves once every answer has been written. */
export async function serveMcpStdio({ door, input, output, logger, caller }: McpStdioOptions): Promise<void> {
  const send = (message: unknown) => output.write(`${JSON.stringify(message)}\n`);
  const pending = new Set<Promise<void>>();
  // Told once the client has initialized (nothing but the answer may come before): the tools it listed changed.
  let stopWatching: (() => void) | undefined;
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (err) {
      send(errorMessage(null, JSONRPC_PARSE_ERROR, `the line is not valid JSON: ${(err as Error).message}`));
      continue;
    }
    const outcome = door.handle(message, { caller, logger, scope: 'stdio', inputBytes: Buffer.byteLength(line) });
    if (outcome.kind === 'reply') {
      send(outcome.message);
      if (outcome.initialized) stopWatching ??= door.onToolListChanged(send);
    }
    else if (outcome.kind === 'call') {
      const { call, id, progressToken } = outcome;
      const done = (async () => {
        if (progressToken !== undefined) {
          const notifier = new ProgressNotifier(progressToken);
          for await (const batch of call.watch()) {
            for (const ev of batch.events) {
              const note = notifier.notification(ev);
              if (note) send(note);
            }
          }
        }
        await call.result;
        // A cancelled request gets no response (the client has given up on it).
        if (call.stoppedBy !== 'cancel') output.write(`${door.callReplyText(id, call)}\n`);
      })();
      pending.add(done);
      void done.finally(() => pending.delete(done));
    }
  }
  stopWatching?.();
  await Promise.all(pending);
}
