/** The `store:` config section: where state that any instance may be asked about lives. */
import { z } from 'zod';

export const StoreConfig = z.strictObject({
  /** `memory`: this process only (the default, nothing to install). `redis`: shared by every instance using the same Redis and prefix. */
  kind: z.enum(['memory', 'redis']).default('memory'),
  /** Redis URL (`redis://host:port/db`, `rediss://` for TLS; credentials as `redis://user:pass@host`). Used with `kind: redis`. */
  url: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0')
    .default('redis://127.0.0.1:6379/0'),
  /** Every key this gateway writes starts with it, so several gateways can share one Redis. */
  prefix: z.string().max(64).default('a2e:'),
  /** How long a Redis command may take before the request that needed it answers 503, milliseconds. */
  command_timeout_ms: z.int().positive().default(2000),
});
export type StoreConfig = z.output<typeof StoreConfig>;
