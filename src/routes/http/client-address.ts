/**
 * The address a request comes from, for per-address quotas: the socket's
 * peer, or behind a trusted proxy (`server.trust_proxy`) the last address
 * the proxy appended to X-Forwarded-For (earlier entries are the client's
 * own claims and are not trusted).
 */
import type { Context } from 'hono';
import { nodeRequest, requestHeader } from './node.js';

export function clientAddress(c: Context, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = requestHeader(c, 'x-forwarded-for');
    const last = forwarded?.split(',').at(-1)?.trim();
    if (last) return last;
  }
  return nodeRequest(c)?.socket.remoteAddress ?? 'unknown';
}
