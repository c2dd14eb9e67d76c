/**
 * Which addresses http_request may connect to. Only public unicast addresses,
 * unless the operator allows more (tools.http.allow_private / allow_hosts).
 * Ranges come from ipaddr.js, not from hand-written parsing.
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Global unicast IPv6 (2000::/3): anything outside it is not a public destination. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address (where cloud metadata services live)',
  uniqueLocal: 'a unique-local (private) address',
  carrierGradeNat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  rfc6052: 'a NAT64 address',
  rfc6145: 'an IPv4-translated address',
  ipv4Mapped: 'an IPv4-mapped address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
};

/** Strip the brackets of an IPv6 URL host ("[::1]" → "::1"). */
export function bareHost(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Parse an IP address; IPv4-mapped IPv6 (::ffff:a.b.c.d) becomes the IPv4 address it carries. */
export function parseAddress(text: string): Address | null {
  const bare = bareHost(text);
  if (!ipaddr.isValid(bare)) return null;
  return ipaddr.process(bare);
}

/** The range name of an address: "unicast" only for public destinations. */
export function rangeOf(addr: Address): string {
  const range = addr.range();
  if (addr.kind() === 'ipv6' && range === 'unicast' && !(addr as ipaddr.IPv6).match(GLOBAL_UNICAST_V6))
    return 'reserved';
  return range;
}

export interface AddressPolicyConfig {
  allow_hosts: readonly string[];
  allow_private: boolean;
}

/** An allow_hosts entry's host part and port (null: any port). "[::1]:8080", "10.0.0.5:80", "intranet:443". */
export function splitPort(entry: string): { host: string; port: number | null } {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] === undefined ? null : Number(bracketed[2]) };
  const colons = text.split(':').length - 1;
  // Two or more colons without brackets: a bare IPv6 address (or range), which cannot carry a port.
  if (colons !== 1) return { host: text, port: null };
  const at = text.lastIndexOf(':');
  return {
    host: text.slice(0, at),
    port: /^\d{1,5}$/.test(text.slice(at + 1)) ? Number(text.slice(at + 1)) : Number.NaN,
  };
}

/** Any port, or only these. */
type Ports = 'any' | Set<number>;

const portAllowed = (ports: Ports | undefined, port: number | undefined) =>
  ports === 'any' || (ports !== undefined && port !== undefined && ports.has(port));

export class AddressPolicy {
  private readonly names = new Map<string, Ports>();
  private readonly ranges: [Address, number, number | null][] = [];

  constructor(private readonly config: AddressPolicyConfig) {
    for (const entry of config.allow_hosts) {
      const { host, port } = splitPort(entry);
      const bare = host.toLowerCase();
      if (bare.includes('/')) this.ranges.push([...parseCidr(bare), port]);
      else if (ipaddr.isValid(bare)) {
        const ip = ipaddr.process(bare);
        this.ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128, port]);
      } else {
        const name = bare.replace(/\.$/, '');
        const ports = this.names.get(name);
        if (port === null || ports === 'any') this.names.set(name, 'any');
        else this.names.set(name, (ports ?? new Set()).add(port));
      }
    }
  }

  /**
   * Why connecting to `address` (which `host` resolved to, or `host` itself for
   * an IP literal) on `port` is refused, or null when it is allowed. Without a
   * port, entries limited to a port do not apply.
   */
  refusal(host: string, address: string, port?: number): string | null {
    const addr = parseAddress(address);
    if (!addr) return `host ${host} resolved to something that is not an IP address (${address})`;
    const range = rangeOf(addr);
    if (range === 'unicast' || this.config.allow_private) return null;
    const named = this.names.get(bareHost(host).toLowerCase().replace(/\.$/, ''));
    if (portAllowed(named, port)) return null;
    const inRanges = this.ranges.filter(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
    if (inRanges.some(([, , only]) => only === null || only === port)) return null;
    const what = RANGE_WORDS[range] ?? 'a reserved (non-public) address';
    const shownHost = bareHost(host);
    const literal = parseAddress(shownHost);
    const subject = !literal
      ? `host ${shownHost} resolves to ${addr.toString()}, ${what}`
      : literal.toString() === shownHost
        ? `host ${shownHost} is ${what}`
        : `host ${shownHost} (${addr.toString()}) is ${what}`;
    const otherPorts = [...(named instanceof Set ? named : []), ...inRanges.map(([, , only]) => only!)];
    if (otherPorts.length > 0) {
      const list = [...new Set(otherPorts)].sort((a, b) => a - b).join(', ');
      return `${subject}; tools.http.allow_hosts allows it on port ${list} only, not on port ${port ?? '(unknown)'}; add an entry for this port to allow it`;
    }
    return `${subject}; add it to tools.http.allow_hosts to allow it`;
  }
}

function parseCidr(text: string): [Address, number] {
  const [ip, bits] = ipaddr.parseCIDR(text);
  // A mapped IPv6 range of IPv4 addresses is compared as IPv4, like the addresses themselves.
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(ip as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [ip, bits];
}

/** Is `entry` a valid allow_hosts entry (optionally with a port)? Used by the config schema. */
export function validAllowEntry(entry: string): boolean {
  const { host, port } = splitPort(entry);
  if (port !== null && !(Number.isInteger(port) && port >= 1 && port <= 65535)) return false;
  const bare = host.trim();
  if (bare.includes('/')) {
    try {
      ipaddr.parseCIDR(bare);
      return true;
    } catch {
      return false;
    }
  }
  return ipaddr.isValid(bare) || /^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?$/i.test(bare);
}
