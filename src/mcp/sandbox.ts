/**
 * Running a stdio MCP server in the bubblewrap sandbox of `run_command`
 * (built from tools/shell/sandbox.ts): its own user, PID, IPC and (unless
 * `network: true`) network namespaces, a read-only system, a private /tmp,
 * a private writable workspace, and read-only mounts of what it needs — its
 * install directory (found from the command and its path arguments) and the
 * configured `mounts`.
 */
import { chownSync, existsSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { sanitize } from '../a2a/tools.js';
import type { ShellLimits } from '../tools/shell/config.js';
import { SANDBOX_GID, SANDBOX_PATH, SANDBOX_UID, SANDBOX_WORKSPACE, probeSandbox, sandboxCommand } from '../tools/shell/sandbox.js';
import type { McpServerConfig } from './config.js';

/** Limits for a long-lived server: like run_command's, but no CPU-time cap (a server runs for days). */
const LIMITS: ShellLimits = { processes: 256, memory_mb: 4096, file_size_mb: 1024, cpu_s: 10 * 365 * 86_400, open_files: 1024 };
/** Size of the server's private /tmp (a tmpfs), MiB. */
const TMP_MB = 64;

/** Already in every sandbox (read-only system directories). */
const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/', '/etc/'];

let probe: Promise<string | null> | undefined;

/** Whether a sandbox can be made here: null when it can, else why not (probed once per process). */
export function sandboxAvailable(): Promise<string | null> {
  probe ??= (async () => {
    const workspace = makeWorkspace('probe');
    try {
      return await probeSandbox({ workspace, network: false, mounts: [], limits: LIMITS, tmpMb: TMP_MB });
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  })();
  return probe;
}

export interface SandboxedCommand {
  file: string;
  args: string[];
  /** Read-only mounts the server gets, for GET /mcp-servers and the log. */
  mounts: string[];
  /** Remove the server's private workspace. */
  cleanup(): void;
}

/** The command line that runs the server `id` in a sandbox. Throws when its command cannot be found. */
export function sandboxedCommand(id: string, config: McpServerConfig, env: Record<string, string>): SandboxedCommand {
  const command = findCommand(config.command!, config.cwd, env.PATH ?? process.env.PATH ?? '');
  const mounts = new Set<string>(config.mounts);
  for (const m of installMounts(command)) mounts.add(m);
  for (const arg of config.args) {
    const path = isAbsolute(arg) ? arg : config.cwd ? resolve(config.cwd, arg) : undefined;
    if (path && existsSync(path)) for (const m of installMounts(path)) mounts.add(m);
  }
  // Scripts run by "#!/usr/bin/env node" need node on the sandbox's PATH.
  const nodeBin = dirname(process.execPath);
  let path = SANDBOX_PATH;
  if (!isSystemPath(process.execPath)) {
    mounts.add(dirname(nodeBin));
    path = `${nodeBin}:${path}`;
  }
  if (config.cwd) mounts.add(resolve(config.cwd));
  const workspace = makeWorkspace(id);
  const list = [...mounts].filter((m) => !isSystemPath(`${m}/`));
  const { file, args } = sandboxCommand({
    workspace,
    cwd: config.cwd ? resolve(config.cwd) : SANDBOX_WORKSPACE,
    env: { PATH: path, HOME: SANDBOX_WORKSPACE, LANG: 'C.UTF-8', TMPDIR: '/tmp', ...config.env },
    network: config.network,
    mounts: list,
    limits: LIMITS,
    tmpMb: TMP_MB,
    argv: [command, ...config.args],
  });
  return { file, args, mounts: list, cleanup: () => rmSync(workspace, { recursive: true, force: true }) };
}

function makeWorkspace(id: string): string {
  const dir = mkdtempSync(join(tmpdir(), `a2e-mcp-${sanitize(id)}-`));
  // The sandbox runs as an unprivileged uid when the gateway is root: let it use its workspace.
  if (process.getuid?.() === 0) chownSync(dir, SANDBOX_UID, SANDBOX_GID);
  return dir;
}

const isSystemPath = (p: string) => SYSTEM_PREFIXES.some((s) => p.startsWith(s));

/** The absolute, symlink-free path of a command given as a path or a name on PATH. */
function findCommand(command: string, cwd: string | undefined, pathVar: string): string {
  if (command.includes('/')) {
    const full = resolve(cwd ?? process.cwd(), command);
    if (!existsSync(full)) throw new Error(`command "${command}" does not exist`);
    return realpathSync(full);
  }
  for (const dir of pathVar.split(delimiter)) {
    if (!dir) continue;
    const full = join(dir, command);
    if (existsSync(full) && statSync(full).isFile()) return realpathSync(full);
  }
  throw new Error(`command "${command}" was not found on PATH; give its full path in mcp.servers.<id>.command`);
}

/**
 * What a program at `path` needs to run: the node_modules tree it lives in
 * (an installed package and its dependencies), else its directory and the
 * nearest node_modules above it (where Node resolves its imports).
 */
function installMounts(path: string): string[] {
  const real = realpathSync(path);
  if (isSystemPath(real)) return [];
  const at = real.lastIndexOf('/node_modules/');
  if (at >= 0) return [real.slice(0, at + '/node_modules'.length)];
  const dir = statSync(real).isDirectory() ? real : dirname(real);
  const mounts = [dir];
  for (let up = dir; up !== dirname(up); up = dirname(up)) {
    if (existsSync(join(up, 'node_modules'))) {
      mounts.push(join(up, 'node_modules'));
      break;
    }
  }
  return mounts;
}
