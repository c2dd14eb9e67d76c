import { z } from 'zod';

/** tools.http — outbound HTTP requests, guarded against SSRF. */
export const HttpConfig = z.strictObject({
  enabled: z.boolean().default(true),
});
export type HttpConfig = z.output<typeof HttpConfig>;
