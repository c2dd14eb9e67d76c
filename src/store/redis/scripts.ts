/**
 * Lua scripts run by EVALSHA (loaded with EVAL the first time a Redis has
 * not seen one): what must be read and written in one step, without
 * read-modify-write races between gateway instances.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from './connection.js';

export class Script {
  private readonly sha: string;
  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run<T = unknown>(client: RedisClient, keys: string[], args: (string | number)[]): Promise<T> {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    try {
      return (await client.sendCommand(['EVALSHA', this.sha, ...tail])) as T;
    } catch (err) {
      if (!String((err as Error)?.message).startsWith('NOSCRIPT')) throw err;
      return (await client.sendCommand(['EVAL', this.source, ...tail])) as T;
    }
  }
}
