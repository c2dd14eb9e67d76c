/** Telling loopback addresses and names apart from everything else. */
import { isIPv4, isIPv6 } from 'node:net';

const IPV4_LOOPBACK = /^127\.(25[0-5]|2[0-4]\d|1?\d?\d)\.(25[0-5]|2[0-4]\d|1?\d?\d)\.(25[0-5]|2[0-4]\d|1?\d?\d)$/;

/** An IP address (as Node reports a bound or peer address) on the loopback interface. */
export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase();
  if (isIPv4(a)) return IPV4_LOOPBACK.test(a);
  if (isIPv6(a)) return a === '::1' || (a.startsWith('::ffff:') && IPV4_LOOPBACK.test(a.slice(7)));
  return false;
}

/**
 * A `Host` header naming this machine's loopback: `localhost` (or a
 * `*.localhost` name, which browsers resolve to loopback themselves), a
 * dotted 127.x.y.z address or `[::1]`, with an optional port. Anything else,
 * on a loopback bind, is a page that rebound some DNS name to 127.0.0.1.
 */
export function isLoopbackHostHeader(host: string): boolean {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::\d{1,5})?$/.exec(host);
  if (!m) return false;
  const name = m[1]!.toLowerCase();
  if (name.startsWith('[')) return isLoopbackAddress(name.slice(1, -1));
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  return bare === 'localhost' || bare.endsWith('.localhost') || IPV4_LOOPBACK.test(bare);
}

/** The host name of a Host header (lower case, port and trailing dot removed), or null when malformed. */
export function hostHeaderName(host: string): string | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::\d{1,5})?$/.exec(host);
  if (!m) return null;
  const name = m[1]!.toLowerCase();
  return name.endsWith('.') ? name.slice(0, -1) : name;
}
