/**
 * `server.trust_proxy`: which proxies in front of the gateway are trusted to
 * say where a request came from (X-Forwarded-For) and how it reached them
 * (X-Forwarded-Proto / X-Forwarded-Host).
 */
import { isIP } from 'node:net';
import { z } from 'zod';

/** An IP address, or a CIDR range such as 10.0.0.0/8 or fd00::/8. */
const ProxyAddress = z.string().refine(
  (s) => {
    const [address = '', prefix, ...rest] = s.split('/');
    const family = isIP(address);
    if (!family || rest.length > 0) return false;
    return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
  },
  {
    message:
      'expected an IP address (e.g. 10.0.0.5) or a CIDR range (e.g. 10.0.0.0/8) of a proxy in front of the gateway',
  },
);

export const TrustProxy = z.union([z.boolean(), z.int().min(1).max(16), z.array(ProxyAddress).min(1).max(1000)]);
export type TrustProxy = z.infer<typeof TrustProxy>;
