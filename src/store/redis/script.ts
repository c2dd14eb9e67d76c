/**
 * A Lua script run by its SHA1 (EVALSHA), loaded on first use and again when
 * Redis forgot it (NOSCRIPT after a restart): one round trip in the common case.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from './connection.js';

export class RedisScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    try {
      return await client.sendCommand(['EVALSHA', this.sha, ...tail]);
    } catch (err) {
      if (!String((err as Error)?.message).startsWith('NOSCRIPT')) throw err;
      return client.sendCommand(['EVAL', this.source, ...tail]);
    }
  }
}
