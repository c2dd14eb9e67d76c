/**
 * A configured credential, ready to inject: its secrets read from the
 * environment once, an OAuth2 client-credentials token fetched, cached and
 * refreshed before it expires. What it sets (a header, a query parameter) is
 * reported so that a tool does not offer it to callers, and its secret values
 * so that an error echoing a peer's answer can be scrubbed of them.
 */
import type { CredentialConfig } from './credential-config.js';

/** A token is renewed this long before it expires (clock skew, time in flight). */
const REFRESH_MARGIN_MS = 30_000;
/** Most bytes of a token endpoint's answer read. */
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/** Fetches a token endpoint's answer (the source's own dispatcher, with its address rules). */
export type TokenFetch = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string },
  maxBytes: number,
) => Promise<{ status: number; text: string }>;

/** A credential that cannot be used; the message names what to fix, never a secret. */
export class CredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialError';
  }
}

export class Credential {
  /** Header names (lower case) this credential sets. */
  readonly headerNames: ReadonlySet<string>;
  /** Query parameter names this credential sets. */
  readonly queryNames: ReadonlySet<string>;
  private readonly values: Record<string, string>;
  /** The secrets read from the environment (computed once). */
  private held: string[] | undefined;
  private token: { value: string; expires: number } | undefined;
  private fetching: Promise<string> | undefined;

  constructor(
    readonly config: CredentialConfig,
    env: NodeJS.ProcessEnv,
    private readonly fetchToken: TokenFetch | null = null,
  ) {
    const read = (name: string) => {
      const value = env[name];
      if (value === undefined || value === '')
        throw new CredentialError(`environment variable ${name} is not set; set it to the ${config.type} credential`);
      return value;
    };
    switch (config.type) {
      case 'bearer':
        this.values = { token: read(config.token_env) };
        break;
      case 'header':
      case 'query':
        this.values = { value: read(config.value_env) };
        break;
      case 'basic':
        this.values = { username: read(config.username_env), password: read(config.password_env) };
        break;
      case 'oauth2_client_credentials':
        this.values = { client_id: read(config.client_id_env), client_secret: read(config.client_secret_env) };
        break;
    }
    this.headerNames = new Set(
      config.type === 'query' ? [] : [config.type === 'header' ? config.name.toLowerCase() : 'authorization'],
    );
    this.queryNames = new Set(config.type === 'query' ? [config.name] : []);
  }

  /** Every secret this credential holds or has fetched (to scrub from anything shown); a new array each time. */
  secrets(): string[] {
    this.held ??= [
      ...Object.values(this.values).filter((v) => v.length >= 4),
      ...(this.config.type === 'basic'
        ? [Buffer.from(`${this.values.username}:${this.values.password}`).toString('base64')]
        : []),
    ];
    return this.token ? [...this.held, this.token.value] : [...this.held];
  }

  /** Set the credential on a request's headers and URL. `renew`: fetch a new OAuth2 token first (the last one was refused). */
  async apply(headers: Record<string, string>, url: URL, renew = false): Promise<void> {
    const c = this.config;
    switch (c.type) {
      case 'bearer':
        headers.authorization = `Bearer ${this.values.token}`;
        return;
      case 'header':
        headers[c.name.toLowerCase()] = this.values.value!;
        return;
      case 'query':
        url.searchParams.set(c.name, this.values.value!);
        return;
      case 'basic':
        headers.authorization = `Basic ${Buffer.from(`${this.values.username}:${this.values.password}`).toString('base64')}`;
        return;
      case 'oauth2_client_credentials':
        headers.authorization = `Bearer ${await this.accessToken(renew)}`;
    }
  }

  /** Whether a 401 is worth one retry with a new token. */
  get renewable(): boolean {
    return this.config.type === 'oauth2_client_credentials';
  }

  private accessToken(renew: boolean): Promise<string> {
    if (renew) this.token = undefined;
    if (this.token && Date.now() < this.token.expires - REFRESH_MARGIN_MS) return Promise.resolve(this.token.value);
    // One request for everyone who needs a token now.
    this.fetching ??= this.requestToken().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async requestToken(): Promise<string> {
    const c = this.config as Extract<CredentialConfig, { type: 'oauth2_client_credentials' }>;
    if (!this.fetchToken) throw new CredentialError('no way to reach the token endpoint');
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (c.scopes.length > 0) form.set('scope', c.scopes.join(' '));
    const basic = Buffer.from(
      `${encodeURIComponent(this.values.client_id!)}:${encodeURIComponent(this.values.client_secret!)}`,
    ).toString('base64');
    const where = new URL(c.token_url).host;
    let answer: { status: number; text: string };
    try {
      answer = await this.fetchToken(
        c.token_url,
        {
          method: 'POST',
          headers: {
            authorization: `Basic ${basic}`,
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
          },
          body: form.toString(),
        },
        MAX_TOKEN_ANSWER_BYTES,
      );
    } catch (err) {
      throw new CredentialError(
        `the token endpoint at ${where} could not be reached (${(err as Error).message}); the call may be retried`,
      );
    }
    let parsed: { access_token?: unknown; expires_in?: unknown; error?: unknown } = {};
    try {
      parsed = JSON.parse(answer.text) as typeof parsed;
    } catch {
      // reported below
    }
    if (answer.status !== 200 || typeof parsed.access_token !== 'string' || parsed.access_token === '') {
      const why = typeof parsed.error === 'string' ? ` (error "${parsed.error.slice(0, 100)}")` : '';
      throw new CredentialError(
        `the token endpoint at ${where} answered ${answer.status} without an access token${why}; check the client id, secret and scopes`,
      );
    }
    const lifetime =
      typeof parsed.expires_in === 'number' && parsed.expires_in > 0 ? parsed.expires_in * 1000 : 3600_000;
    // A lifetime shorter than twice the margin is renewed at half its life instead.
    const margin = Math.min(REFRESH_MARGIN_MS, lifetime / 2);
    this.token = { value: parsed.access_token, expires: Date.now() + lifetime - margin + REFRESH_MARGIN_MS };
    return parsed.access_token;
  }
}

/** `text` with every secret replaced by "[redacted]". */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('[redacted]');
  return out;
}
