/**
 * One JSON request to the gateway over node:http(s), answered as status +
 * parsed body: what `a2e-gateway list` needs (POST /handshake, POST
 * /tool/list). It touches none of the web globals (Request, Response,
 * Headers, streams): the first use of any of them loads Node's built-in
 * undici, about a tenth of a short command's start-up. It fails like
 * ToolAPI: a ToolAPIError "connection_failed" naming the network error.
 */
import { request as httpRequest } from 'node:http';
import { ToolAPIError } from '../client/index.js';
import { errorFrom } from '../client/tool-api.js';

export interface JsonAnswer {
  status: number;
  /** The parsed body; undefined when empty or not JSON. */
  json: unknown;
}

export async function postJson(
  baseUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<JsonAnswer> {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}${path}`);
  // node:https (and tls) only for an https gateway: loading them costs a plain-http command more than its request.
  const send = url.protocol === 'https:' ? process.getBuiltinModule('node:https').request : httpRequest;
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise<JsonAnswer>((resolve, reject) => {
    const outgoing = send(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': String(payload.length),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', (err) => reject(unreachable(baseUrl, err)));
      },
    );
    outgoing.on('error', (err) => reject(unreachable(baseUrl, err)));
    outgoing.end(payload);
  });
}

const unreachable = (baseUrl: string, err: Error & { code?: string }) =>
  new ToolAPIError('connection_failed', `cannot reach the gateway at ${baseUrl} (${err.code ?? err.message})`, {
    cause: err,
  });

/** The gateway's A2E error answer as a ToolAPIError; anything else as bad_response: ToolAPI's own mapping. */
export const answerError = (answer: JsonAnswer, what: string): ToolAPIError =>
  errorFrom(answer.json, answer.status, what);
