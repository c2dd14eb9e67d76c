import { z } from 'zod';
import { EvalConfig } from './eval/config.js';
import { FsConfig } from './fs/config.js';
import { HttpConfig } from './http/config.js';
import { ShellConfig } from './shell/config.js';

/** The `tools` config section: one sub-section per native tool group. */
export const ToolsConfig = z.strictObject({
  fs: FsConfig.prefault({}),

  shell: ShellConfig.prefault({}),

  http: HttpConfig.prefault({}),

  eval: EvalConfig.prefault({}),
});
export type ToolsConfig = z.output<typeof ToolsConfig>;
