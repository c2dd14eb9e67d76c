/**
 * Running a stdio MCP server in the bubblewrap sandbox of `run_command`
 * (built from tools/shell/sandbox.ts): its own user, PID, IPC and (unless
 * `network: true`) network namespaces, a read-only system, a private /tmp,
 * its own persistent writable data directory at /workspace (data_dir, under
 * server.state_dir by default; its quota is watched in connection.ts), and
 * mounts of what it needs — its install directory (found from the command and
 * its path arguments) read-only, and the configured `mounts` (read-only unless
 * `rw: true`).
 */
import { chownSync, existsSync, mkdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import type { ShellLimits } from '../tools/shell/config.js';
import {
  SANDBOX_GID,
  SANDBOX_PATH,
  SANDBOX_UID,
  SANDBOX_WORKSPACE,
  probeSandbox,
  sandboxCommand,
  unsearchableBySandboxUser,
} from '../tools/shell/sandbox.js';
import { toolNamePart } from '../wire/tool-name.js';
import type { McpServerConfig } from './config.js';
import { makeScratch, removeStaleScratch } from './scratch.js';

/** Limits for a long-lived server: like run_command's, but no CPU-time cap (a server runs for days). */
const LIMITS: ShellLimits = {
  processes: 256,
  memory_mb: 4096,
  file_size_mb: 1024,
  cpu_s: 10 * 365 * 86_400,
  open_files: 1024,
};
/** Size of the server's private /tmp (a tmpfs), MiB. */
const TMP_MB = 64;

/** Already in every sandbox (read-only system directories). */
const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/', '/etc/'];

let probe: Promise<string | null> | undefined;

/**
 * Whether a sandbox can be made here: null when it can, else why not (probed once per process). First, the
 * scratch folders gateways that were killed left behind are removed (`removed` is told their names).
 */
export function sandboxAvailable(removed: (names: string[]) => void = () => {}): Promise<string | null> {
  probe ??= (async () => {
    const stale = removeStaleScratch();
    if (stale.length > 0) removed(stale);
    const workspace = makeScratch('probe');
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
  /** Read-only mounts the server gets, for the log. */
  mounts: string[];
  /** Writable mounts (`rw: true`), for the log. */
  rwMounts: string[];
  /** Host path of the server's data directory (its /workspace). */
  dataDir: string;
}

/** A mount and where it came from: `from` names it as the operator's config does. */
interface Mount {
  path: string;
  from: string;
  /** The absolute path the config itself gives (directories above it may be named in errors); absent when derived. */
  configured?: string;
  rw?: boolean;
  /** The fix besides chmod, when it is not to install the server elsewhere. */
  elsewhere?: string;
}

/** The host directory a sandboxed server `id` keeps its data in: `data_dir`, else `<state_dir>/mcp/<id>`. */
export function dataDirOf(id: string, config: McpServerConfig, stateDir: string): string {
  return resolve(config.data_dir ?? join(stateDir, 'mcp', toolNamePart(id)));
}

/**
 * The command line that runs the server `id` in a sandbox, its data directory made (under `stateDir` unless
 * `data_dir` says where). Throws when its command, a mount or the data directory cannot be found or reached.
 * `quotaBytes`: the data directory's quota (null: none); no file in it may grow past it.
 */
export function sandboxedCommand(
  id: string,
  config: McpServerConfig,
  env: Record<string, string>,
  quotaBytes: number | null,
  stateDir: string,
): SandboxedCommand {
  const command = findCommand(config.command!, config.cwd, env.PATH ?? process.env.PATH ?? '');
  const fromConfig = (p: string) =>
    isAbsolute(p) ? p : config.cwd && isAbsolute(config.cwd) ? resolve(config.cwd, p) : undefined;
  const wanted: Mount[] = config.mounts.map((m, i) => {
    const { path, rw } = typeof m === 'string' ? { path: m, rw: false } : m;
    if (!existsSync(path))
      throw new Error(`mounts[${i}] "${path}" does not exist; create it or remove it from mcp.servers.${id}.mounts`);
    return { path: resolve(path), from: `mounts[${i}]`, configured: fromConfig(path), rw };
  });
  const commandPath = config.command!.includes('/') ? fromConfig(config.command!) : undefined;
  for (const m of installMounts(command))
    wanted.push({ path: m, from: `command "${config.command}"`, configured: commandPath });
  config.args.forEach((arg, i) => {
    const path = isAbsolute(arg) ? arg : config.cwd ? resolve(config.cwd, arg) : undefined;
    if (!path || !existsSync(path)) return;
    const from = `args[${i}] "${arg}"`;
    for (const m of installMounts(path)) wanted.push({ path: m, from, configured: fromConfig(arg) });
    // A script reached through a symlink is opened by the path given: its directory is needed too.
    if (realpathSync(path) !== path) wanted.push({ path: dirname(path), from, configured: fromConfig(arg) });
  });
  // Scripts run by "#!/usr/bin/env node" need node on the sandbox's PATH.
  const nodeBin = dirname(process.execPath);
  let path = SANDBOX_PATH;
  if (!isSystemPath(process.execPath)) {
    wanted.push({ path: dirname(nodeBin), from: 'Node.js (the gateway\'s own, for "#!/usr/bin/env node" scripts)' });
    path = `${nodeBin}:${path}`;
  }
  if (config.cwd)
    wanted.push({ path: resolve(config.cwd), from: `cwd "${config.cwd}"`, configured: fromConfig(config.cwd) });
  // A writable mount wins over the same path derived read-only; system paths are in every sandbox already.
  const rw = [...new Set(wanted.filter((m) => m.rw).map((m) => m.path))];
  const ro = [
    ...new Set(wanted.filter((m) => !m.rw && !rw.includes(m.path) && !isSystemPath(`${m.path}/`)).map((m) => m.path)),
  ];
  const dataDir = makeDataDir(id, config, stateDir);
  if (process.getuid?.() === 0) {
    const used = wanted.filter(
      (m, i) => (ro.includes(m.path) || rw.includes(m.path)) && wanted.findIndex((o) => o.path === m.path) === i,
    );
    const elsewhere = `set ${config.data_dir !== undefined ? `mcp.servers.${id}.data_dir` : 'server.state_dir'} to a directory other users can enter`;
    for (const m of [...used, { path: dataDir, from: 'its data directory', configured: dataDir, elsewhere }])
      checkReachable(id, m);
    for (const m of wanted) if (m.rw) checkWritable(id, m);
  }
  const { file, args } = sandboxCommand({
    workspace: dataDir,
    cwd: config.cwd ? resolve(config.cwd) : SANDBOX_WORKSPACE,
    env: { PATH: path, HOME: SANDBOX_WORKSPACE, LANG: 'C.UTF-8', TMPDIR: '/tmp', ...config.env },
    network: config.network,
    mounts: ro,
    rwMounts: rw,
    limits: { ...LIMITS, fsize_bytes: Math.min(LIMITS.file_size_mb * 1024 * 1024, quotaBytes ?? Infinity) },
    tmpMb: TMP_MB,
    argv: [command, ...config.args],
  });
  return { file, args, mounts: ro, rwMounts: rw, dataDir };
}

/**
 * Make the server's data directory (and the state directory above it). A root gateway runs the sandbox as
 * SANDBOX_UID: the directory is made that user's, so the server can write in it.
 */
function makeDataDir(id: string, config: McpServerConfig, stateDir: string): string {
  const dir = dataDirOf(id, config, stateDir);
  const key = config.data_dir !== undefined ? `mcp.servers.${id}.data_dir` : 'server.state_dir';
  try {
    mkdirSync(dir, { recursive: true });
    if (!statSync(dir).isDirectory()) throw new Error('it is not a directory');
    if (process.getuid?.() === 0 && statSync(dir).uid !== SANDBOX_UID) chownSync(dir, SANDBOX_UID, SANDBOX_GID);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new Error(
      `its data directory could not be made (${why}); set ${key} to a directory the gateway may create and write`,
    );
  }
  return dir;
}

/**
 * A root gateway drops to the sandbox user before bwrap binds the mounts: a mount that user cannot reach (a
 * checkout inside a 0700 home directory) would only make the process exit. Say which and how to fix it,
 * naming a host directory only when it is part of a path the config gives.
 */
function checkReachable(id: string, mount: Mount): void {
  const blocked = unsearchableBySandboxUser(mount.path, true);
  if (blocked === null) return;
  const named =
    mount.configured !== undefined && (mount.configured === blocked || mount.configured.startsWith(`${blocked}/`));
  const where = named
    ? `"${blocked}" is not searchable by others`
    : 'a directory above its install directory is not searchable by others';
  throw new Error(
    `the sandbox user (uid ${SANDBOX_UID}) cannot reach ${mount.from}: ${where}. Make the path traversable ` +
      `(${named ? `chmod o+x "${blocked}"` : 'chmod o+x on each directory above it'}), or ` +
      (mount.elsewhere ??
        `install the server where other users can read it (and list that in mcp.servers.${id}.mounts if it is not found from the command)`) +
      `, or set mcp.servers.${id}.sandbox: false to run it unconfined`,
  );
}

/** A root gateway's sandbox runs as SANDBOX_UID: a `rw: true` mount that user cannot write would fail each write. */
function checkWritable(id: string, mount: Mount): void {
  const s = statSync(mount.path);
  const writable =
    (s.mode & 0o002) !== 0 ||
    (s.uid === SANDBOX_UID && (s.mode & 0o200) !== 0) ||
    (s.gid === SANDBOX_GID && (s.mode & 0o020) !== 0);
  if (writable) return;
  throw new Error(
    `${mount.from} is rw: true, but the sandbox user (uid ${SANDBOX_UID}) cannot write it: make it that user's ` +
      `(chown ${SANDBOX_UID}:${SANDBOX_GID} "${mount.configured ?? mount.path}"), or drop rw from mcp.servers.${id}.mounts`,
  );
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
