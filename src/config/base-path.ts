/** Config pieces for running behind a reverse proxy. */
import { z } from 'zod';

/**
 * `server.base_path`: "" (none) or a path such as "/a2e". A trailing slash is
 * dropped ("/a2e/" → "/a2e"; "/" → "").
 */
export const BasePath = z
  .string()
  .regex(/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*\/?$/, {
    message: 'must be empty or a path like "/a2e": start with "/", no spaces, "?" or "#"',
  })
  .transform((p) => p.replace(/\/+$/, ''));
