/**
 * Reading a JSON request body: the size limit here (HTTP), then the message
 * reader every door shares (engine/message-reader.ts): strict UTF-8, nesting,
 * one JSON.parse, one schema check. Errors say what was wrong with the body.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { z } from 'zod';
import { GatewayError } from '../../engine/index.js';
import {
  checkMessage,
  decodeMessage,
  DEFAULT_MAX_JSON_DEPTH,
  type MessageWording,
} from '../../engine/message-reader.js';
import { FIELD_LIMITS } from '../../protocol/index.js';
import { nodeRequest, requestHeader } from './node.js';

export { DEFAULT_MAX_JSON_DEPTH, nestsDeeperThan } from '../../engine/message-reader.js';

const REQUEST_BODY: MessageWording = {
  subject: 'request body',
  invalid: 'invalid request',
  emptyHint: 'send a JSON object (Content-Type: application/json)',
  objectHint: 'a JSON object',
};

export interface ParsedBody<T> {
  value: T;
  bytes: number;
}

/** Read the body, enforcing `limit` bytes whether or not Content-Length is sent. */
export function readBytes(c: Context, limit: number): Promise<Uint8Array> {
  const tooLarge = () =>
    new GatewayError(
      'payload_too_large',
      `request body is larger than ${limit} bytes (server.body_limit_bytes); send less data`,
      {
        detail: { limit_bytes: limit },
      },
    );
  const declared = requestHeader(c, 'content-length');
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge());
  const incoming = nodeRequest(c);
  // Not an async function: on Node the stream's promise is returned as it is (one promise less per request).
  if (incoming && !incoming.readableDidRead && !('rawBody' in incoming)) return readIncoming(incoming, limit, tooLarge);
  return readWebBody(c, limit, declared, tooLarge);
}

async function readWebBody(
  c: Context,
  limit: number,
  declared: string | undefined,
  tooLarge: () => GatewayError,
): Promise<Uint8Array> {
  if (declared !== undefined) {
    // Length known and within the limit: the server adapter's fast path reads it in one go.
    return new Uint8Array(await c.req.arrayBuffer());
  }
  // Chunked body of unknown length: count while reading, stop at the limit.
  const body = c.req.raw.body;
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  if (chunks.length === 1) return chunks[0]!;
  return Buffer.concat(chunks, size);
}

/**
 * On Node, the body straight from the IncomingMessage: the adapter's own
 * reader would copy it into an ArrayBuffer first. The limit is counted as
 * chunks arrive (Content-Length may be absent or wrong). The listeners are
 * one set of functions for every request, the request's state an object on
 * its IncomingMessage: no closures made per request.
 */
function readIncoming(incoming: IncomingMessage, limit: number, tooLarge: () => GatewayError): Promise<Uint8Array> {
  // Already torn down: no event would ever come.
  if (incoming.destroyed) return Promise.reject(bodyGone());
  return new Promise((resolve, reject) => {
    (incoming as Reading)[BODY] = { chunks: [], size: 0, limit, tooLarge, resolve, reject };
    incoming.on('data', onBodyData).on('end', onBodyEnd).on('error', onBodyError).on('close', onBodyClose);
  });
}

/** A body being read (readIncoming). */
interface BodyRead {
  chunks: Buffer[];
  size: number;
  limit: number;
  tooLarge: () => GatewayError;
  resolve: (body: Uint8Array) => void;
  reject: (err: Error) => void;
}
const BODY = Symbol('a2e.bodyRead');
type Reading = IncomingMessage & { [BODY]?: BodyRead };

const bodyGone = () =>
  new GatewayError('invalid_request', 'the client closed the connection before the request body was complete');

/** The read is over, with the body or an error: the listeners go, the promise settles (once). */
function settleBody(incoming: Reading, err: Error | null, body?: Uint8Array): void {
  const read = incoming[BODY];
  if (read === undefined) return;
  incoming[BODY] = undefined;
  incoming.off('data', onBodyData).off('end', onBodyEnd).off('error', onBodyError).off('close', onBodyClose);
  if (err) read.reject(err);
  else read.resolve(body!);
}

function onBodyData(this: Reading, chunk: Buffer): void {
  const read = this[BODY];
  if (read === undefined) return;
  read.size += chunk.length;
  if (read.size > read.limit) {
    // Stop reading; Node discards the rest once the answer is sent.
    this.pause();
    settleBody(this, read.tooLarge());
  } else read.chunks.push(chunk);
}

function onBodyEnd(this: Reading): void {
  const read = this[BODY];
  if (read !== undefined)
    settleBody(this, null, read.chunks.length === 1 ? read.chunks[0]! : Buffer.concat(read.chunks, read.size));
}

function onBodyError(this: Reading, err: Error): void {
  settleBody(this, err);
}

function onBodyClose(this: Reading): void {
  settleBody(this, bodyGone());
}

export async function readJson<S extends z.ZodType>(
  c: Context,
  schema: S,
  limit: number,
  options: { maxDepth?: number } = {},
): Promise<ParsedBody<z.output<S>>> {
  const bytes = await readBytes(c, limit);
  const json = decodeMessage(bytes, REQUEST_BODY, options.maxDepth ?? DEFAULT_MAX_JSON_DEPTH);
  // Echoed as req_id if the request fails from here on; an over-long id is refused by the schema, not echoed.
  const id = json.id;
  if (typeof id === 'string' && id.length <= FIELD_LIMITS.id) c.set('messageId', id);
  return { value: checkMessage(schema, json, REQUEST_BODY), bytes: bytes.byteLength };
}
