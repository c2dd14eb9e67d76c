/**
 * tools.http.credentials: which configured credential http_request injects
 * into a request, by origin and path prefix. Only a hop to the origin the
 * caller asked for gets one: a redirect never carries a credential to another
 * origin, even one that has its own entry.
 */
import type { Dispatcher } from 'undici';
import type { CredentialConfig } from './credential-config.js';
import { Credential } from './credential.js';
import { readBounded } from './dispatcher-fetch.js';

export interface CredentialEntry {
  match: string;
  auth: CredentialConfig;
}

interface Compiled {
  origin: string;
  prefix: string;
  credential: Credential;
}

export class CredentialMatcher {
  private readonly entries: Compiled[];

  /** Throws a CredentialError naming the entry when an environment variable is not set. */
  constructor(entries: readonly CredentialEntry[], env: NodeJS.ProcessEnv, dispatcher: () => Promise<Dispatcher>) {
    this.entries = entries.map((e, i) => {
      const { origin, prefix } = parseMatch(e.match);
      try {
        const credential = new Credential(e.auth, env, async (url, init, max) =>
          readBounded(await dispatcher(), new URL(url), max, init),
        );
        return { origin, prefix, credential };
      } catch (err) {
        throw new Error(`tools.http.credentials[${i}] (${e.match}): ${(err as Error).message}`, { cause: err });
      }
    });
    // The longest prefix wins.
    this.entries.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The credential for `url`, when it is on `origin` (the caller's) and an entry matches it. */
  match(url: URL, origin: string): Credential | null {
    if (url.origin !== origin) return null;
    for (const e of this.entries) if (e.origin === url.origin && url.pathname.startsWith(e.prefix)) return e.credential;
    return null;
  }

  /** Every secret held (to scrub from answers). */
  secrets(): string[] {
    return this.entries.flatMap((e) => e.credential.secrets());
  }
}

/** "https://api.example.com/v1/*" → its origin and path prefix ("/v1/"); a bare origin matches every path. */
export function parseMatch(match: string): { origin: string; prefix: string } {
  const url = new URL(match.replace(/\*+$/, ''));
  return { origin: url.origin, prefix: url.pathname };
}

/** Is `match` a valid entry (an http(s) URL, optionally ending in "*")? */
export function validMatch(match: string): boolean {
  try {
    const url = new URL(match.replace(/\*+$/, ''));
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.username && !url.password;
  } catch {
    return false;
  }
}
