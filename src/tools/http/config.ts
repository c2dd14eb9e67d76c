import { z } from 'zod';
import { CredentialConfig } from '../../security/credential-config.js';
import { validMatch } from '../../security/credential-match.js';
import { validAllowEntry } from './address.js';

const MiB = 1024 * 1024;

/** tools.http — outbound HTTP requests, guarded against SSRF. */
export const HttpConfig = z.strictObject({
  /** Offer http_request. */
  enabled: z.boolean().default(true),
  /**
   * Exceptions to the private-address rule: host names (exact, case-insensitive), IP addresses or CIDR ranges
   * (matched against the address actually connected to) that may be reached although they are not public.
   * An entry with a port ("intranet.local:8443", "10.0.0.5:80", "[fd00::1]:443") allows that port only.
   */
  allow_hosts: z
    .array(
      z.string().refine(validAllowEntry, {
        message:
          'expected a host name, an IP address or a CIDR range, optionally with a port ' +
          '(e.g. "intranet.local", "10.0.0.5:8080", "10.0.0.0/8", "[fd00::1]:443")',
      }),
    )
    .default([]),
  /** Allow every loopback, private, link-local… address. Only for trusted setups. */
  allow_private: z.boolean().default(false),
  /** Most bytes of a response body kept; the rest is dropped and the result says truncated. */
  max_response_bytes: z.int().positive().default(MiB),
  /** Redirects followed per request (each hop checked again). 0 = return the redirect itself. */
  max_redirects: z.int().min(0).default(5),
  /**
   * Credentials http_request adds to matching requests, so that callers reach an API without holding its key:
   * `match` is an origin and path prefix ("https://api.example.com/v1/*"; the longest match wins), `auth` a
   * credential as in openapi.sources.<id>.auth. Only hops on the origin the caller asked for get one: a redirect
   * never carries it to another origin.
   */
  credentials: z
    .array(
      z.strictObject({
        /** Origin and path prefix, e.g. "https://api.example.com/v1/*". */
        match: z.string().refine(validMatch, {
          message: 'expected an http(s) URL, optionally ending in "*", e.g. "https://api.example.com/v1/*"',
        }),
        /** The credential added to matching requests (bearer, header, query, basic, oauth2_client_credentials). */
        auth: CredentialConfig,
      }),
    )
    .default(() => []),
  /** Default per-request timeout, seconds, when the call does not give one (the call's own timeout still applies). */
  timeout_s: z.number().positive().default(30),
});
export type HttpConfig = z.output<typeof HttpConfig>;
