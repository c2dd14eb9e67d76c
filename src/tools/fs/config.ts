import { z } from 'zod';

/** tools.fs — file tools confined to the workspace root. */
export const FsConfig = z.strictObject({
  enabled: z.boolean().default(true),
  /** The workspace: every file tool (and the shell's working directory) is confined to it. Created at start. */
  root: z.string().min(1).default('./workspace'),
});
export type FsConfig = z.output<typeof FsConfig>;
