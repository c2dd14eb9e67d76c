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

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export function createGuardedAgent(policy: AddressPolicy, options: { connectTimeoutMs?: number } = {}): Agent {
  // net/tls.connect call this for host names: resolve once, refuse if any address is not allowed.
  const checkedLookup = (hostname: string, opts: { family?: number; all?: boolean }, callback: LookupCallback) => {
    dnsLookup(hostname, { family: opts.family ?? 0, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const a of addresses) {
        const refusal = policy.refusal(hostname, a.address);
        if (refusal) return callback(new RefusedAddressError(refusal), []);
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      if (opts.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  const connector = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000, lookup: checkedLookup } as buildConnector.BuildOptions);
  return new Agent({
    connect(opts, callback) {
      const host = bareHost(opts.hostname);
      if (isIP(host)) {
        const refusal = policy.refusal(host, host);
        if (refusal) {
          callback(new RefusedAddressError(refusal), null);
          return;
        }
      }
      connector(opts, callback);
    },
  });
}
