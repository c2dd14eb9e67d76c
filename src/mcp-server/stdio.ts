/**
 * The MCP door over stdio: newline-delimited JSON-RPC on stdin/stdout, for a
 * desktop MCP client that launches the gateway (`a2e-gateway mcp-stdio`).
 * stdout carries only protocol messages; logs go to stderr.
 * A line is at most `maxLineBytes` (server.body_limit_bytes, as a POST /mcp
 * body): a longer one is answered with a parse error as soon as it passes the
 * limit, not kept, and reading resumes after its newline.
 */
import type { Readable, Writable } from 'node:stream';
import { CappedLines } from '../utils/capped-lines.js';
import type { Caller, Logger } from '../engine/index.js';
import { nestsDeeperThan } from '../engine/message-reader.js';
import { ProgressNotifier, batchOf, errorMessage, type McpDoor } from './door.js';
import { JSONRPC } from '../wire/jsonrpc.js';

export interface McpStdioOptions {
  door: McpDoor;
  input: Readable;
  output: Writable;
  logger: Logger;
  /** Who the local client is (no token on stdio: the gateway's policy still applies). */
  caller: Caller;
  /** Longest line (one message), bytes: server.body_limit_bytes. */
  maxLineBytes: number;
  /** Deepest nesting of a message's arrays/objects (limits.max_json_depth), checked before parsing. */
  maxJsonDepth: number;
}

/** Serve until the input ends; resolves once every answer has been written. */
export async function serveMcpStdio({
  door,
  input,
  output,
  logger,
  caller,
  maxLineBytes,
  maxJsonDepth,
}: McpStdioOptions): Promise<void> {
  const send = (message: unknown) => output.write(`${JSON.stringify(message)}\n`);
  const pending = new Set<Promise<void>>();
  // What initialize agreed on: one client per stdio connection, so it holds for every later message.
  let protocolVersion: string | undefined;
  // Told once the client has initialized (nothing but the answer may come before): the tools it listed changed.
  let stopWatching: (() => void) | undefined;
  for await (const bytes of linesOf(input, maxLineBytes, send)) {
    const line = bytes.toString('utf8');
    if (!line.trim()) continue;
    if (nestsDeeperThan(bytes, maxJsonDepth)) {
      // As POST /mcp answers it.
      send(
        errorMessage(
          null,
          JSONRPC.INVALID_REQUEST,
          `the message nests arrays/objects deeper than ${maxJsonDepth} levels (limits.max_json_depth); flatten the data`,
        ),
      );
      continue;
    }
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (err) {
      send(errorMessage(null, JSONRPC.PARSE_ERROR, `the line is not valid JSON: ${(err as Error).message}`));
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
              const outcome = door.handle(m, {
                caller,
                logger,
                scope: 'stdio',
                inputBytes: Buffer.byteLength(JSON.stringify(m) ?? ''),
                protocolVersion,
              });
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
    const outcome = door.handle(message, {
      caller,
      logger,
      scope: 'stdio',
      inputBytes: Buffer.byteLength(line),
      protocolVersion,
      hearsLogs: true,
    });
    if (outcome.kind === 'reply') {
      if (outcome.initialized)
        protocolVersion = (outcome.message as unknown as { result: { protocolVersion: string } }).result
          .protocolVersion;
      send(outcome.message);
      if (outcome.initialized) stopWatching ??= door.onToolListChanged(send);
    } else if (outcome.kind === 'call') {
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
  stopWatching?.();
  await Promise.all(pending);
}

/** The input's lines, each at most `maxBytes`; a longer one is answered with a parse error and skipped. */
async function* linesOf(input: Readable, maxBytes: number, send: (message: unknown) => void): AsyncGenerator<Buffer> {
  const ready: Buffer[] = [];
  const lines = new CappedLines(maxBytes, {
    line: (bytes) => ready.push(bytes),
    overflow: () =>
      send(
        errorMessage(
          null,
          JSONRPC.PARSE_ERROR,
          `the line is longer than ${maxBytes} bytes (server.body_limit_bytes); it is skipped up to its newline: send smaller messages or raise the limit`,
        ),
      ),
  });
  for await (const chunk of input) {
    lines.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    while (ready.length) yield ready.shift()!;
  }
  lines.end();
  while (ready.length) yield ready.shift()!;
}
