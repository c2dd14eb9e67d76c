import { z } from 'zod';
import { EvalConfig } from './eval/config.js';
import { FsConfig } from './fs/config.js';
import { perPrincipal } from './fs/principal-dir.js';
import { HttpConfig } from './http/config.js';
import { ShellConfig } from './shell/config.js';

/** The `tools` config section: one sub-section per native tool group. */
export const ToolsConfig = z
  .strictObject({
    fs: FsConfig.prefault({}),

    shell: ShellConfig.prefault({}),

    http: HttpConfig.prefault({}),

    eval: EvalConfig.prefault({}),
  })
  .superRefine((tools, ctx) => {
    // An unconfined command reaches every principal's workspace: per-principal workspaces would keep nothing apart.
    if (perPrincipal(tools.fs.root) && tools.shell.enabled !== false && tools.shell.sandbox === 'none') {
      ctx.addIssue({
        code: 'custom',
        path: ['shell', 'sandbox'],
        message:
          'is "none", so commands would reach every principal\'s workspace, which tools.fs.root ({principal}) keeps apart; ' +
          'use the sandbox (bwrap), or set tools.shell.enabled: false',
      });
    }
  });
export type ToolsConfig = z.output<typeof ToolsConfig>;
