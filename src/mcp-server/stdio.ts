/**
 * The MCP door over stdio: newline-delimited JSON-RPC on stdin/stdout, for a
 * desktop MCP client that launches the gateway (`a2e-gateway mcp-stdio`).
 * stdout carries only protocol messages; logs go to stderr.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Caller, Logger } from '../engine/index.js';
import { JSONRPC_PARSE_ERROR, ProgressNotifier, batchOf, errorMessage, type McpDoor } from './door.js';

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
  const lines = createInterface({ input, crlfDelay: Infinity });
  // What initialize agreed on: one client per stdio connection, so it holds for every later message.
  let protocolVersion: string | undefined;
  for await (const line of lines) {
    if (!line.trim()) continue;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (err) {
      send(errorMessage(null, JSONRPC_PARSE_ERROR, `the line is not valid JSON: ${(err as Error).message}`));
      continue;
    }
    const batch = batchOf(message, protocolVersion);
    if (batch) {
      if ('refused' in batch) send(batch.refused);
      else {
        // 2025-03-26: every message handled as if it came alone, then one array of the responses.
        const done = (async () => {
          const answers = await Promise.all(
            batch.messages.map(async (m) => {
              const outcome = door.handle(m, { caller, logger, scope: 'stdio', inputBytes: Buffer.byteLength(JSON.stringify(m) ?? ''), protocolVersion });
              if (outcome.kind === 'reply') return outcome.message;
              if (outcome.kind === 'accepted') return undefined;
              await outcome.call.result;
              return outcome.call.stoppedBy === 'cancel' ? undefined : door.callReply(outcome.id, outcome.call);
            }),
          );
          const replies = answers.filter((a) => a !== undefined);
          if (replies.length > 0) send(replies);
        })();
        pending.add(done);
        void done.finally(() => pending.delete(done));
      }
      continue;
    }
    const outcome = door.handle(message, { caller, logger, scope: 'stdio', inputBytes: Buffer.byteLength(line), protocolVersion, hearsLogs: true });
    if (outcome.kind === 'reply') {
      if (outcome.initialized) protocolVersion = (outcome.message as unknown as { result: { protocolVersion: string } }).result.protocolVersion;
      send(outcome.message);
    }
    else if (outcome.kind === 'call') {
      const { call, id, progressToken } = outcome;
      const done = (async () => {
        const notifier = new ProgressNotifier(progressToken);
        for await (const batch of call.watch()) {
          for (const ev of batch.events) {
            const note = notifier.notification(ev);
            if (note) send(note);
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
  await Promise.all(pending);
}
