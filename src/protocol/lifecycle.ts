import { z } from 'zod';
import { messageFields } from './base.js';

/** A2E lifecycle messages of the message transport (base protocol): ping/pong and shutdown. */
export const Ping = z
  .object({ ...messageFields('ping') })
  .meta({ id: 'Ping', description: 'Liveness check; answered by a pong' });
export type Ping = z.output<typeof Ping>;

export const Pong = z
  .object({
    ...messageFields('pong'),
    req_id: z.string().default(''),
    uptime_seconds: z.number().meta({ description: 'Seconds since the gateway started' }),
  })
  .meta({ id: 'Pong', description: 'The answer to a ping' });
export type Pong = z.output<typeof Pong>;

export const Shutdown = z
  .object({
    ...messageFields('shutdown'),
    timeout: z
      .int()
      .min(0)
      .default(10)
      .meta({ description: 'Seconds running calls may take to finish before they are stopped' }),
  })
  .meta({ id: 'Shutdown', description: 'Close the session: running calls get `timeout` seconds, then are stopped' });
export type Shutdown = z.output<typeof Shutdown>;
