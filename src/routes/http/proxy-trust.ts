/**
 * `server.trust_proxy` applied to a request: whether its forwarded headers
 * come from a proxy the operator trusts, and the client's address.
 *
 * X-Forwarded-For is a list every proxy may append to, and a client can start
 * it with anything it likes. Only the entries the trusted proxies appended
 * are believed: with a hop count n, the n-th entry from the right (what the
 * outermost trusted proxy saw); with a list of proxy addresses, the rightmost
 * entry that is not one of them, and only when the request's peer is one of
 * them. The edge proxy should replace the header (nginx:
 * `proxy_set_header X-Forwarded-For $remote_addr;`), so the list is never
 * longer than the trusted chain.
 */
import { BlockList, isIP } from 'node:net';
import type { Context } from 'hono';
import { nodeRequest, requestHeader } from './node.js';

/** The `server.trust_proxy` setting: off, a number of hops (`true` = 1), or the proxies' addresses / CIDR ranges. */
export type TrustProxySetting = boolean | number | readonly string[];

export interface ProxyTrust {
  /** Whether this request came through a trusted proxy (so its X-Forwarded-* headers are believed). */
  trusted(c: Context): boolean;
  /** The address the request comes from, for per-address quotas. */
  clientAddress(c: Context): string;
}

/** Longest address taken from a header (an IPv6 address with a zone is well under it). */
const MAX_ADDRESS = 64;

const peerAddress = (c: Context) => unmapped(nodeRequest(c)?.socket.remoteAddress ?? 'unknown');

/** `::ffff:10.0.0.1` (how a dual-stack socket shows an IPv4 peer) as `10.0.0.1`. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

function forwardedFor(c: Context): string[] {
  const header = requestHeader(c, 'x-forwarded-for');
  if (!header) return [];
  return header
    .split(',')
    .map((entry) => unmapped(entry.trim().slice(0, MAX_ADDRESS)))
    .filter((entry) => entry !== '');
}

export function proxyTrust(setting: TrustProxySetting | undefined): ProxyTrust {
  if (setting === undefined || setting === false) return { trusted: () => false, clientAddress: peerAddress };
  if (typeof setting === 'boolean' || typeof setting === 'number') {
    const hops = setting === true ? 1 : setting;
    return {
      trusted: () => true,
      clientAddress(c) {
        const chain = forwardedFor(c);
        if (chain.length === 0) return peerAddress(c);
        // Fewer entries than hops: a proxy did not append; the leftmost is the closest there is to the client.
        return chain[Math.max(0, chain.length - hops)]!;
      },
    };
  }
  const proxies = new BlockList();
  for (const entry of setting) {
    const [address = '', prefix] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) proxies.addAddress(address, type);
    else proxies.addSubnet(address, Number(prefix), type);
  }
  const isProxy = (address: string) => {
    const family = isIP(address);
    return family !== 0 && proxies.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
  return {
    trusted: (c) => isProxy(peerAddress(c)),
    clientAddress(c) {
      const peer = peerAddress(c);
      if (!isProxy(peer)) return peer;
      const chain = forwardedFor(c);
      for (let i = chain.length - 1; i >= 0; i--) if (!isProxy(chain[i]!)) return chain[i]!;
      return chain[0] ?? peer;
    },
  };
}
