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
  if (addr.kind() === 'ipv6' && range === 'unicast' && !(addr as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) return 'reserved';
  return range;
}

export interface AddressPolicyConfig {
  allow_hosts: readonly string[];
  allow_private: boolean;
}

export class AddressPolicy {
  private readonly names = new Set<string>();
  private readonly ranges: [Address, number][] = [];

  constructor(private readonly config: AddressPolicyConfig) {
    for (const entry of config.allow_hosts) {
      const bare = bareHost(entry.trim()).toLowerCase();
      if (bare.includes('/')) this.ranges.push(parseCidr(bare));
      else if (ipaddr.isValid(bare)) this.ranges.push(ipaddr.process(bare).kind() === 'ipv4' ? [ipaddr.process(bare), 32] : [ipaddr.process(bare), 128]);
      else this.names.add(bare.replace(/\.$/, ''));
    }
  }

  /**
   * Why connecting to `address` (which `host` resolved to, or `host` itself for
   * an IP literal) is refused, or null when it is allowed.
   */
  refusal(host: string, address: string): string | null {
    const addr = parseAddress(address);
    if (!addr) return `host ${host} resolved to something that is not an IP address (${address})`;
    const range = rangeOf(addr);
    if (range === 'unicast' || this.config.allow_private) return null;
    if (this.names.has(bareHost(host).toLowerCase().replace(/\.$/, ''))) return null;
    if (this.ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits))) return null;
    const what = RANGE_WORDS[range] ?? 'a reserved (non-public) address';
    const shownHost = bareHost(host);
    const literal = parseAddress(shownHost);
    const subject = !literal
      ? `host ${shownHost} resolves to ${addr.toString()}, ${what}`
      : literal.toString() === shownHost
        ? `host ${shownHost} is ${what}`
        : `host ${shownHost} (${addr.toString()}) is ${what}`;
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

/** Is `entry` a valid allow_hosts entry? Used by the config schema. */
export function validAllowEntry(entry: string): boolean {
  const bare = bareHost(entry.trim());
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
