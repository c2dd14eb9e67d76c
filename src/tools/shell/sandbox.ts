/**
 * The command line that runs one command inside a bubblewrap sandbox:
 *
 *   setpriv [--reuid/--regid nobody] --pdeathsig KILL
 *     bwrap <namespaces, read-only system, workspace, private /tmp>
 *       prlimit <limits> -- argv
 *
 * setpriv drops a root gateway to an unprivileged host uid (so file
 * permissions and RLIMIT_NPROC apply; root is exempt from the latter) and
 * makes the sandbox die with the gateway. bwrap gives the command its own
 * user, PID, IPC, UTS, cgroup and (by default) network namespaces; killing
 * bwrap kills its PID-1 child (--die-with-parent), and the kernel then kills
 * every process left in the namespace, including setsid'd ones and ones that
 * ignore SIGTERM. --disable-userns keeps commands from making user
 * namespaces of their own (`unshare -Ur`), the kernel surface most sandbox
 * escapes go through; the private /tmp is a tmpfs of bounded size.
 */
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ShellLimits } from './config.js';

/** Where the workspace appears inside the sandbox. */
export const SANDBOX_WORKSPACE = '/workspace';
/** The unprivileged identity commands run as (nobody/nogroup on Debian). */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;
/** PATH inside the sandbox (system directories only). */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin';

export const BWRAP = '/usr/bin/bwrap';
const SETPRIV = '/usr/bin/setpriv';
const PRLIMIT = '/usr/bin/prlimit';

/** Top-level system directories: bound read-only when real directories, recreated when symlinks (merged /usr). */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** The few /etc entries programs need (users, name resolution, time zone, loader, alternatives, CA certificates). */
const ETC_FILES = [
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'host.conf',
  'gai.conf',
  'resolv.conf',
  'protocols',
  'services',
  'localtime',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'mime.types',
  'ssl',
  'ca-certificates',
];

/**
 * The first directory on the way to `path` that the sandbox user may not search, or null when there is none.
 * A root gateway drops to that user before bwrap sets up the mounts, so every directory above a mount (and,
 * with `self`, a mounted directory itself, whose files the sandbox must read) has to be searchable by it.
 */
export function unsearchableBySandboxUser(path: string, self = false): string | null {
  const dirs: string[] = [];
  for (let dir = self ? path : dirname(path); ; dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dir === dirname(dir)) break;
  }
  for (const dir of dirs) {
    let s;
    try {
      s = statSync(dir);
    } catch {
      return null; // missing: reported as such where it is used
    }
    if (!s.isDirectory()) continue;
    const searchable =
      (s.mode & 0o001) !== 0 ||
      (s.uid === SANDBOX_UID && (s.mode & 0o100) !== 0) ||
      (s.gid === SANDBOX_GID && (s.mode & 0o010) !== 0);
    if (!searchable) return dir;
  }
  return null;
}

/** The limits of one command: the configured ones, and a file size cap in bytes that replaces file_size_mb when set. */
export type CommandLimits = ShellLimits & { fsize_bytes?: number };

export interface SandboxSpec {
  /** Host path of the workspace, bound read-write at /workspace. */
  workspace: string;
  /** Working directory inside the sandbox. */
  cwd: string;
  env: Record<string, string>;
  network: boolean;
  /** Extra host paths, bound read-only at the same path. */
  mounts: readonly string[];
  /** Extra host paths bound writable at the same path (after the read-only ones). */
  rwMounts?: readonly string[];
  limits: CommandLimits;
  /** Size of the private /tmp, MiB. */
  tmpMb: number;
  argv: readonly string[];
}

/** Whether the gateway itself runs as root (and must drop to SANDBOX_UID on the host). */
const isRoot = () => process.getuid?.() === 0;

/** The full command line (program + arguments) for one sandboxed command. */
export function sandboxCommand(spec: SandboxSpec): { file: string; args: string[] } {
  const args: string[] = [];
  if (isRoot()) args.push('--reuid', String(SANDBOX_UID), '--regid', String(SANDBOX_GID), '--clear-groups');
  args.push('--pdeathsig', 'KILL', '--', BWRAP);

  args.push(
    '--unshare-user',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_GID),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'sandbox',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
  );
  if (!spec.network) args.push('--unshare-net');

  args.push('--ro-bind', '/usr', '/usr');
  for (const dir of SYSTEM_DIRS) {
    let link: string | undefined;
    try {
      if (lstatSync(dir).isSymbolicLink()) link = readlinkSync(dir);
    } catch {
      continue; // absent on this machine
    }
    if (link !== undefined) args.push('--symlink', link, dir);
    else args.push('--ro-bind', dir, dir);
  }
  for (const f of ETC_FILES) args.push('--ro-bind-try', `/etc/${f}`, `/etc/${f}`);
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(spec.tmpMb * 1024 * 1024), '--tmpfs', '/tmp');
  args.push('--bind', spec.workspace, SANDBOX_WORKSPACE);
  // After /tmp and the workspace, so an extra mount below them is not hidden.
  for (const m of spec.mounts) args.push('--ro-bind', m, m);
  for (const m of spec.rwMounts ?? []) args.push('--bind', m, m);
  // The sandbox's root (and /etc in it) is a tmpfs bwrap made; nothing may be written there.
  args.push('--remount-ro', '/', '--chdir', spec.cwd);

  args.push('--clearenv');
  for (const [k, v] of Object.entries(spec.env)) args.push('--setenv', k, v);

  args.push('--', PRLIMIT, ...limitArgs(spec.limits), '--', ...spec.argv);
  return { file: SETPRIV, args };
}

/** prlimit options for the configured limits (`limits.fsize_bytes`, when given, replaces file_size_mb). */
function limitArgs(l: CommandLimits): string[] {
  const MiB = 1024 * 1024;
  return [
    `--nproc=${l.processes}`,
    `--as=${l.memory_mb * MiB}`,
    `--fsize=${l.fsize_bytes ?? l.file_size_mb * MiB}`,
    `--cpu=${l.cpu_s}`,
    `--nofile=${l.open_files}`,
  ];
}

/**
 * The command line for `sandbox: none`: no confinement, but the limits, and
 * death with the gateway (the caller kills the process group at the end).
 */
export function unconfinedCommand(argv: readonly string[], limits: CommandLimits): { file: string; args: string[] } {
  return { file: SETPRIV, args: ['--pdeathsig', 'KILL', '--', PRLIMIT, ...limitArgs(limits), '--', ...argv] };
}

/**
 * Check that a sandbox can be created here, by running `true` in one.
 * Returns null when it works, else what is missing, for the start-up error.
 */
export async function probeSandbox(spec: Omit<SandboxSpec, 'argv' | 'cwd' | 'env'>): Promise<string | null> {
  for (const [tool, pkg] of [
    [BWRAP, 'bubblewrap'],
    [SETPRIV, 'util-linux'],
    [PRLIMIT, 'util-linux'],
  ] as const) {
    if (!existsSync(tool)) return `${tool} is missing; install the Debian package "${pkg}"`;
  }

  const { file, args } = sandboxCommand({
    ...spec,
    cwd: SANDBOX_WORKSPACE,
    env: { PATH: SANDBOX_PATH },
    argv: ['true'],
  });
  const failure = await run(file, args);
  if (failure === null) return null;
  // An older bubblewrap lacks an option the sandbox relies on: say so rather than blame user namespaces.
  const help = (await run(BWRAP, ['--help'], true)) ?? '';
  for (const option of ['--disable-userns', '--size']) {
    if (help.includes('--unshare-user') && !help.includes(option)) {
      return `${BWRAP} has no ${option} option; install bubblewrap 0.8.0 or later (Debian 12 has it)`;
    }
  }
  return (
    `bubblewrap could not create a sandbox (${failure}); it needs unprivileged user namespaces ` +
    '(sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone=1 or ' +
    'kernel.apparmor_restrict_unprivileged_userns=0 where those exist)'
  );
}

/** Run a program; null when it succeeded, else why it failed (or, with `output`, its stdout either way). */
function run(file: string, args: string[], output = false): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(file, args, { env: {}, timeout: 15_000 }, (err, stdout, stderr) => {
      if (output) return resolve(String(stdout));
      resolve(err ? String(stderr).trim() || err.message : null);
    });
  });
}
