/** The `ui:` section: the console at GET /ui. Referenced from src/config/schema.ts. */
import { z } from 'zod';

export const UiConfig = z.strictObject({
  /**
   * Serve the console at /ui. Default: on when the gateway listens on loopback, or when `auth` is on
   * (the page then asks for a token); off on other binds.
   */
  enabled: z.boolean().optional(),
});
export type UiConfig = z.output<typeof UiConfig>;
