import { z } from 'zod';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Resource limits applied to every command (setrlimit inside the sandbox). */
export const ShellLimits = z.strictObject({
  /** Most processes the sandbox user may have at once (RLIMIT_NPROC). */
  processes: z.int().positive().default(256),
  /** Address space of each process, MiB (RLIMIT_AS). */
  memory_mb: z.int().positive().default(4096),
  /** Largest file a command may write, MiB (RLIMIT_FSIZE). */
  file_size_mb: z.int().positive().default(1024),
  /** CPU time of each process, seconds (RLIMIT_CPU). */
  cpu_s: z.int().positive().default(300),
  /** Open files per process (RLIMIT_NOFILE). */
  open_files: z.int().positive().default(1024),
});
export type ShellLimits = z.output<typeof ShellLimits>;

/** tools.shell — sandboxed command execution. */
export const ShellConfig = z.strictObject({
  /**
   * "auto": offer run_command when a sandbox can be created here (checked just after the gateway listens; listed
   * once the check passes), else go without it and say why.
   * true: the sandbox must work (the gateway refuses to start otherwise). false: no run_command.
   */
  enabled: z.union([z.boolean(), z.literal('auto')]).default('auto'),
  /** Working directory of commands, relative to the workspace (tools.fs.root). */
  cwd: z.string().min(1).default('.'),
  /** Let commands reach the network (otherwise they get a network namespace with only loopback). */
  network: z.boolean().default(false),
  /** Bytes of stdout + stderr kept per command; beyond it output is cut and the result says truncated. */
  max_output_bytes: z
    .int()
    .positive()
    .default(1024 * 1024),
  /** Extra environment variables for every command (on top of PATH, HOME and LANG). */
  env: z
    .record(z.string().regex(ENV_NAME, 'an environment variable name is letters, digits and "_"'), z.string())
    .default({}),
  /** When set, only these programs (argv[0], a bare name looked up in the system PATH) may be run. */
  allow: z.array(z.string().regex(/^[^/\0]+$/, 'a program name without "/"')).optional(),
  /** Extra host paths commands may see, read-only, at the same path. */
  mounts: z.array(z.string().startsWith('/', 'an absolute host path')).default([]),
  /** Size of the sandbox's private /tmp (a tmpfs in the host's memory), MiB; writing past it fails with ENOSPC. */
  tmp_mb: z.int().positive().default(64),
  /** "bwrap": every command in a bubblewrap sandbox. "none": unconfined (explicit opt-out; not for untrusted callers). */
  sandbox: z.enum(['bwrap', 'none']).default('bwrap'),
  limits: ShellLimits.prefault({}),
});
export type ShellConfig = z.output<typeof ShellConfig>;
