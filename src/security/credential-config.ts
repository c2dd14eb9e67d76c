/**
 * A credential the gateway holds for an upstream API and injects into the
 * requests it makes there (openapi.sources.<id>.auth, tools.http.credentials):
 * the secrets are named by environment variable, never written in the config,
 * and never reach a caller.
 */
import { z } from 'zod';

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name, e.g. "API_TOKEN"');

export const CredentialConfig = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('bearer'),
    /** Environment variable holding the token, sent as `Authorization: Bearer <token>`. */
    token_env: envName,
  }),
  z.strictObject({
    type: z.literal('header'),
    /** Header the secret is sent in (e.g. "X-Api-Key"). */
    name: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name, e.g. "X-Api-Key"'),
    /** Environment variable holding the header's value. */
    value_env: envName,
  }),
  z.strictObject({
    type: z.literal('query'),
    /** Query parameter the secret is sent in (e.g. "api_key"). */
    name: z.string().min(1),
    /** Environment variable holding the parameter's value. */
    value_env: envName,
  }),
  z.strictObject({
    type: z.literal('basic'),
    /** Environment variable holding the user name (HTTP Basic). */
    username_env: envName,
    /** Environment variable holding the password (HTTP Basic). */
    password_env: envName,
  }),
  z.strictObject({
    type: z.literal('oauth2_client_credentials'),
    /** The authorization server's token endpoint (RFC 6749 §4.4); the client authenticates with HTTP Basic. */
    token_url: z.url({ protocol: /^https?$/, error: 'must be the http(s) URL of the token endpoint' }),
    /** Environment variable holding the client id. */
    client_id_env: envName,
    /** Environment variable holding the client secret. */
    client_secret_env: envName,
    /** Scopes asked for (none when empty). */
    scopes: z.array(z.string().min(1)).default(() => []),
  }),
]);
export type CredentialConfig = z.output<typeof CredentialConfig>;
