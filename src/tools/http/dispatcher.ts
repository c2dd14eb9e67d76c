/**
 * The undici dispatcher of http_request, with the SSRF check at connect time.
 * A host name is resolved once, every address it resolves to is checked, and
 * the socket connects to those checked addresses (the `lookup` handed to
 * net/tls.connect returns them; there is no second lookup). IP literals, which
 * net.connect does not look up, are checked before connecting. Because this
 * runs for every new connection, each redirect hop is checked too.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { bareHost, type AddressPolicy } from './address.js';

/** A connection refused by the address policy. */
export class RefusedAddressError extends Error {
  readonly code = 'A2E_REFUSED_ADDRESS';
  constructor(message: string) {
    super(message);
    this.name = 'RefusedAddressError';
  }
}

/** Ports whose connector is kept for reuse (80 and 443 in practice); a connection to any other builds its own. */
const MAX_CACHED_CONNECTORS = 64;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export function createGuardedAgent(policy: AddressPolicy, options: { connectTimeoutMs?: number } = {}): Agent {
  // net/tls.connect call `lookup` for host names, without the port: so each port gets its own lookup,
  // which resolves once and refuses if any address is not allowed on that port.
  const checkedLookup =
    (port: number) => (hostname: string, opts: { family?: number; all?: boolean }, callback: LookupCallback) => {
      dnsLookup(hostname, { family: opts.family ?? 0, all: true }, (err, addresses) => {
        if (err) return callback(err, []);
        for (const a of addresses) {
          const refusal = policy.refusal(hostname, a.address, port);
          if (refusal) return callback(new RefusedAddressError(refusal), []);
        }
        if (addresses.length === 0)
          return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
        if (opts.all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    };
  const connectTimeout = options.connectTimeoutMs ?? 10_000;
  const build = (port: number) =>
    buildConnector({ timeout: connectTimeout, lookup: checkedLookup(port) } as buildConnector.BuildOptions);
  // A connector per port (it keeps the TLS sessions for reuse); callers choose ports, so only so many are kept.
  const byPort = new Map<number, buildConnector.connector>();
  const connectorFor = (port: number) => {
    let connector = byPort.get(port);
    if (!connector) {
      connector = build(port);
      if (byPort.size < MAX_CACHED_CONNECTORS) byPort.set(port, connector);
    }
    return connector;
  };
  return new Agent({
    connect(opts, callback) {
      const host = bareHost(opts.hostname);
      const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
      if (isIP(host)) {
        const refusal = policy.refusal(host, host, port);
        if (refusal) {
          callback(new RefusedAddressError(refusal), null);
          return;
        }
      }
      connectorFor(port)(opts, callback);
    },
  });
}
