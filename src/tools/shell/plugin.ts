/**
 * The shell tool group: `run_command`, every command in a bubblewrap sandbox
 * (see sandbox.ts) unless the config explicitly opts out with `sandbox: none`.
 */
import { realpath, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import {
  ToolError,
  ToolOutput,
  type Logger,
  type PluginHost,
  type ToolContext,
  type ToolPlugin,
  type UnavailableTool,
} from '../../engine/index.js';
import type { ToolDefinitionInput } from '../../protocol/index.js';
import type { TenantWorkspace, Workspaces } from '../fs/workspaces.js';
import type { NativeContext } from '../native-context.js';
import type { ShellConfig } from './config.js';
import type { Dir } from '../fs/confinement/dir.js';
import { runProcess, type RunResult } from './run.js';
import {
  SANDBOX_GID,
  SANDBOX_PATH,
  SANDBOX_UID,
  SANDBOX_WORKSPACE,
  probeSandbox,
  sandboxCommand,
  unconfinedCommand,
  unsearchableBySandboxUser,
} from './sandbox.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const RUN_COMMAND: ToolDefinitionInput = {
  name: 'run_command',
  // Any allowed command: it may delete files or reach the network.
  mcp: { annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } },
  description:
    'Run a program in a sandbox with the workspace as its working directory. No shell is involved unless you run one ' +
    '(["bash", "-c", "ls | wc -l"]). Only the workspace is writable; there is no network unless the gateway allows it. ' +
    'stdout/stderr stream as log events (info/warn) and are returned with the exit code; a non-zero exit is a failure.',
  input_parameters: [
    {
      name: 'argv',
      type: 'array',
      description: 'Program and its arguments, as strings, e.g. ["ls", "-la"]',
      required: true,
    },
    {
      name: 'cwd',
      type: 'string',
      description: 'Working directory, relative to the workspace root (default: tools.shell.cwd)',
    },
    {
      name: 'stdin',
      type: 'string',
      description: 'Text written to the standard input (default: none, stdin is empty)',
    },
    { name: 'env', type: 'object', description: 'Extra environment variables (name → string value)' },
    {
      name: 'timeout',
      type: 'number',
      description: "Seconds before the command is killed (default and maximum: the call's timeout)",
    },
  ],
  output_parameters: [
    { name: 'exit_code', type: 'integer', description: 'Exit code (null when killed by a signal)' },
    { name: 'stdout', type: 'string', description: 'Standard output (cut at tools.shell.max_output_bytes)' },
    { name: 'stderr', type: 'string', description: 'Standard error (cut at tools.shell.max_output_bytes)' },
    { name: 'truncated', type: 'boolean', description: 'Output was cut' },
  ],
  tags: ['shell', 'command', 'process', 'exec'],
  idempotent: false,
  streaming: true,
  kind: 'native',
};

export function shellPlugin(config: ShellConfig, native: NativeContext): ToolPlugin {
  return new ShellPlugin(config, native.workspaces, native.logger.child({ plugin: 'shell' }));
}

class ShellPlugin implements ToolPlugin {
  readonly name = 'shell';
  private tools = [RUN_COMMAND];
  /** run_command while its sandbox is checked after start (enabled: auto): callable, not listed. */
  private pending: ToolDefinitionInput[] = [];
  /** run_command when its sandbox cannot be made here (enabled: auto), with why: callers and /healthz are told. */
  private unavailable: UnavailableTool[] = [];
  /** Resolves once the sandbox check ends: true when it works. */
  private sandboxChecked: Promise<boolean> = Promise.resolve(true);
  private readonly running = new Set<Promise<unknown>>();
  private readonly stopAll = new AbortController();
  /** The shared workspace's real path, or (one per principal) the directory holding them. */
  private hostWorkspace = '';
  /** Default cwd, as a path inside the sandbox (/workspace/...). */
  private defaultCwd = SANDBOX_WORKSPACE;

  constructor(
    private readonly config: ShellConfig,
    /** Public: GET /admin/workspaces finds them on the native plugins (tools/index.ts workspacesOf). */
    readonly workspaces: Workspaces,
    private readonly logger: Logger,
  ) {}

  listTools() {
    return this.tools;
  }

  async start(host: PluginHost): Promise<void> {
    await this.workspaces.init();
    this.hostWorkspace = await realpath(this.workspaces.base);
    this.defaultCwd = this.sandboxPath(this.config.cwd, 'tools.shell.cwd');
    const shared = this.workspaces.sharedWorkspace;
    // A principal's workspace gets its cwd (and, for a root gateway, its sandbox user) when it is first opened.
    if (!shared) this.workspaces.onOpen((w) => this.prepare(w, false).then((dir) => dir.close()));
    const cwdDir = shared ? await this.prepare(shared, true) : null;
    for (const m of this.config.mounts) {
      if (!existsSync(m)) throw new Error(`tools.shell.mounts: "${m}" does not exist; remove it or create it`);
    }
    if (this.config.sandbox === 'none') {
      this.logger.warn('tools.shell.sandbox is "none": commands run unconfined, as the gateway\'s own user');
      return;
    }
    // Whatever keeps the sandbox from working here, found before running one (a root gateway's workspace).
    let unusable: string | null = null;
    let unreachable = false;
    try {
      if (process.getuid?.() === 0) {
        // bwrap sets up the mounts as the sandbox user, so that user must be able to reach them.
        for (const dir of [this.hostWorkspace, ...this.config.mounts]) await checkReachable(dir);
        if (cwdDir) await this.handWorkspaceToSandboxUser(shared!, cwdDir);
      }
    } catch (err) {
      if (this.config.enabled !== 'auto') throw err;
      unusable = (err as Error).message;
      unreachable = true;
    } finally {
      await cwdDir?.close();
    }
    const check = () =>
      probeSandbox({
        workspace: this.hostWorkspace,
        network: this.config.network,
        mounts: this.config.mounts,
        limits: this.config.limits,
        tmpMb: this.config.tmp_mb,
      });
    // With enabled: auto the check starts once the start-up in progress has run to its end (the CLI's: to the listening
    // line): spawning bwrap forks this process, a synchronous cost (~20-30 ms on a slow VM) start-up need not wait for.
    const probe =
      unusable !== null
        ? Promise.resolve(unusable)
        : this.config.enabled === 'auto'
          ? new Promise<void>((resolve) => setImmediate(resolve)).then(check)
          : check();
    if (this.config.enabled !== 'auto') {
      // enabled: true: a sandbox that cannot be made is a start-up error, so the check runs before listening.
      const missing = await probe;
      if (missing) {
        throw new Error(
          `tools.shell cannot sandbox commands: ${missing}. Fix that, or set tools.shell.enabled: false (or "auto" ` +
            'to start without run_command), or (only when every caller is trusted) tools.shell.sandbox: none to run ' +
            'commands unconfined',
        );
      }
      return;
    }
    // "auto": running a command in a sandbox takes a few hundred ms, so it is checked while the gateway
    // already listens. Meanwhile run_command is not listed; a call to it waits for the check.
    this.tools = [];
    this.pending = [RUN_COMMAND];
    // A check that throws leaves run_command out with its reason, as one that reports a reason does (never an unhandled rejection).
    this.sandboxChecked = probe
      .catch((err: unknown) => (err as Error).message)
      .then((missing) => {
        this.pending = [];
        if (missing) {
          // A fresh machine without bubblewrap still gets a working gateway, never unconfined commands.
          this.logger.warn(
            `run_command is not offered: tools.shell cannot sandbox commands here: ${missing}. Fix that and restart, ` +
              'or set tools.shell.enabled: false to silence this (true makes it a start-up error)',
          );
          const why = unreachable
            ? `the sandbox user (uid ${SANDBOX_UID}) cannot reach the workspace (tools.fs.root) or a tools.shell.mounts path: a directory above it is not searchable by others`
            : this.withoutHostPaths(missing);
          this.unavailable = [
            {
              tool: RUN_COMMAND,
              reason:
                `the gateway cannot sandbox commands on this host (${why}). Its operator can fix that and restart (the ` +
                "gateway's start-up warning says how), or set tools.shell.enabled: false",
            },
          ];
        } else {
          this.tools = [RUN_COMMAND];
        }
        host.toolsChanged();
        return missing === null;
      });
  }

  pendingTools() {
    return this.pending;
  }

  unavailableTools(): readonly UnavailableTool[] {
    return this.unavailable;
  }

  /** `reason` as callers may see it: the workspace's and mounts' host paths replaced by what configures them. */
  private withoutHostPaths(reason: string): string {
    let out = this.hostWorkspace ? reason.replaceAll(this.hostWorkspace, 'the workspace') : reason;
    this.config.mounts.forEach((m, i) => (out = out.replaceAll(m, `tools.shell.mounts[${i}]`)));
    return out;
  }

  loading(): string | null {
    return this.pending.length > 0 ? 'the shell sandbox is being checked (run_command is listed once it works)' : null;
  }

  /**
   * Make the default cwd in a workspace (through descriptors, never following a symlink a command left in it: see
   * fs/dir.ts) and return it open. A principal's workspace (not `atStart`) is also handed to the sandbox user here.
   */
  private async prepare(w: TenantWorkspace, atStart: boolean): Promise<Dir> {
    const cwdRel = posix.relative(SANDBOX_WORKSPACE, this.defaultCwd);
    const cwdDir = await w.files
      .makeDirs(cwdRel ? cwdRel.split('/') : [], null, `tools.shell.cwd (${this.config.cwd})`)
      .catch((err: Error) => {
        throw atStart ? new Error(`${err.message}; fix the workspace or tools.shell.cwd`) : err;
      });
    if (atStart || this.config.sandbox === 'none' || process.getuid?.() !== 0) return cwdDir;
    try {
      await this.handWorkspaceToSandboxUser(w, cwdDir);
      return cwdDir;
    } catch (err) {
      await cwdDir.close();
      throw err;
    }
  }

  /**
   * A root gateway runs commands as nobody (so that permissions and process
   * limits apply); that user must be able to write in the workspace root.
   */
  private async handWorkspaceToSandboxUser(w: TenantWorkspace, cwdDir: Dir): Promise<void> {
    for (const dir of new Set([w.files.dir.handle, cwdDir.handle])) {
      const s = await dir.stat();
      if (s.uid !== SANDBOX_UID) {
        await dir.chown(SANDBOX_UID, SANDBOX_GID); // fchown: the open directory, not whatever a path leads to now
        this.logger.info({ uid: SANDBOX_UID }, 'workspace handed to the sandbox user so commands can write in it');
      }
    }
  }

  async stop(): Promise<void> {
    this.stopAll.abort(new Error('gateway stopping'));
    await Promise.allSettled([...this.running, this.sandboxChecked]);
    await this.workspaces.close();
  }

  async executeTool(_name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    // The caller's workspace, the only one its sandbox binds (kept open while the command runs).
    const run = this.workspaces.use(ctx.principal, (ws) => this.run(ws, args, ctx));
    this.running.add(run);
    try {
      return await run;
    } finally {
      this.running.delete(run);
    }
  }

  private async run(ws: TenantWorkspace, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    if (!(await this.sandboxChecked)) {
      throw new ToolError(
        'run_command is not available: the gateway cannot sandbox commands on this machine (its log says why); ' +
          'GET /tools lists what it offers',
      );
    }
    const argv = checkArgv(args.argv);
    const callEnv = checkEnv(args.env);
    const cwd = args.cwd === undefined ? this.defaultCwd : this.sandboxPath(String(args.cwd), 'cwd');
    const host = ws.files.real;
    await this.checkDirectory(host, cwd);
    if (this.config.allow) argv[0] = resolveAllowed(argv[0]!, this.config.allow);

    const remainingMs = Math.max(0, ctx.deadline - Date.now());
    const timeoutArg = args.timeout === undefined ? undefined : Number(args.timeout);
    if (timeoutArg !== undefined && !(timeoutArg > 0))
      throw new ToolError('timeout must be a positive number of seconds');
    const timeoutMs = timeoutArg === undefined ? remainingMs + 1000 : Math.min(timeoutArg * 1000, remainingMs + 1000);

    // The workspace quota, at the command's boundaries: over it, commands can read and delete but not write files.
    const quota = ws.quota;
    const usedBefore = await quota.usage();
    const limits =
      usedBefore === null || quota.limit === null
        ? this.config.limits
        : {
            ...this.config.limits,
            fsize_bytes: Math.min(this.config.limits.file_size_mb * 1024 * 1024, Math.max(0, quota.limit - usedBefore)),
          };

    const sandboxed = this.config.sandbox === 'bwrap';
    const env = {
      PATH: SANDBOX_PATH,
      HOME: sandboxed ? '/tmp' : host,
      LANG: 'C.UTF-8',
      ...this.config.env,
      ...callEnv,
    };
    const command = sandboxed
      ? sandboxCommand({
          workspace: host,
          cwd,
          env,
          network: this.config.network,
          mounts: this.config.mounts,
          limits,
          tmpMb: this.config.tmp_mb,
          argv,
        })
      : unconfinedCommand(argv, limits);

    const signal = AbortSignal.any([ctx.signal, this.stopAll.signal]);
    const result = await runProcess({
      file: command.file,
      args: command.args,
      env: sandboxed ? {} : env,
      cwd: sandboxed ? host : this.hostPath(host, cwd),
      stdin: args.stdin === undefined ? undefined : String(args.stdin),
      maxOutputBytes: this.config.max_output_bytes,
      timeoutMs,
      signal,
      onLine: ctx.streaming
        ? (stream, line) => ctx.emit('log', { level: stream === 'stdout' ? 'info' : 'warn', message: line, stream })
        : null,
      // A command that writes faster than the caller reads its lines waits on a full pipe; none is dropped.
      ...(ctx.streaming && { linesTaken: () => ctx.eventsTaken() }),
    });
    const over = usedBefore === null ? null : quota.overMessage(await quota.measure());
    return this.outcome(argv[0]!, result, timeoutArg, over);
  }

  private outcome(program: string, r: RunResult, timeoutS: number | undefined, overQuota: string | null): ToolOutput {
    if (r.spawnError) {
      throw new ToolError(`could not start the command runner: ${r.spawnError.message.replace(/\/\S+/g, '<path>')}`);
    }
    const data = { exit_code: r.exitCode, stdout: r.stdout, stderr: r.stderr, truncated: r.truncated };
    const limit = this.config.max_output_bytes;
    switch (r.killed) {
      case 'timeout':
        throw new ToolError(
          `command timed out after ${timeoutS ?? "the call's"} s and was killed with every process it started; pass a larger "timeout"`,
          { data },
        );
      case 'output':
        throw new ToolError(
          `command kept writing past tools.shell.max_output_bytes (${limit} bytes) and was killed; the first ${limit} bytes are in data`,
          { data, truncated: true },
        );
      case 'abort':
        throw new ToolError('command was stopped', { data });
    }
    if (overQuota)
      throw new ToolError(`command "${program}" ran (exit code ${r.exitCode ?? 'none'}), but ${overQuota}`, {
        data,
        exitCode: r.exitCode,
      });
    const notFound = /^prlimit: failed to execute (.*): No such file or directory/m.exec(r.stderr);
    if (r.exitCode !== 0 && notFound) {
      throw new ToolError(
        `program "${program}" was not found; the sandbox's PATH is ${SANDBOX_PATH} and the workspace is at ${SANDBOX_WORKSPACE}` +
          ' (use a path for programs there, or tools.shell.mounts to make other host directories visible)',
        { data, exitCode: r.exitCode },
      );
    }
    if (r.exitCode !== 0) {
      const how = r.exitCode === null ? `was killed by ${r.signal ?? 'a signal'}` : `exited with code ${r.exitCode}`;
      throw new ToolError(`command "${program}" ${how}; its output is in data.stdout and data.stderr`, {
        data,
        exitCode: r.exitCode,
      });
    }
    return new ToolOutput({
      data,
      exitCode: 0,
      truncated: r.truncated,
      summary: `exit 0, ${Buffer.byteLength(r.stdout)} bytes of stdout${r.truncated ? ' (output cut)' : ''}`,
    });
  }

  /** A cwd (config or call) as a path inside the sandbox, confined to the workspace. */
  private sandboxPath(p: string, what: string): string {
    const inside = posix.resolve(SANDBOX_WORKSPACE, p);
    if (inside !== SANDBOX_WORKSPACE && !inside.startsWith(`${SANDBOX_WORKSPACE}/`)) {
      throw new ToolError(`${what} "${p}" is outside the workspace; give a path relative to the workspace root`);
    }
    return inside;
  }

  private hostPath(host: string, sandboxPath: string): string {
    return join(host, posix.relative(SANDBOX_WORKSPACE, sandboxPath));
  }

  private async checkDirectory(host: string, cwd: string): Promise<void> {
    const shown = posix.relative(SANDBOX_WORKSPACE, cwd) || '.';
    try {
      const real = await realpath(this.hostPath(host, cwd));
      const rel = relative(host, real);
      if (rel.startsWith('..') || rel.startsWith(sep)) throw new Error('escapes');
      if ((await stat(real)).isDirectory()) return;
    } catch {
      // fall through
    }
    throw new ToolError(`cwd "${shown}" is not a directory in the workspace; create it first or pick another`);
  }
}

/** Fail when a parent directory of `path` cannot be searched by the sandbox user. */
async function checkReachable(path: string): Promise<void> {
  const dir = unsearchableBySandboxUser(path);
  if (dir !== null) {
    throw new Error(
      `the sandbox user (uid ${SANDBOX_UID}) cannot reach "${path}" because "${dir}" is not searchable by others; ` +
        `run "chmod o+x ${dir}" or put the workspace (tools.fs.root) somewhere else`,
    );
  }
}

function checkArgv(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0) {
    throw new ToolError('argv must be a non-empty array of strings, e.g. ["ls", "-la"]');
  }
  return v.map((a, i) => {
    if (typeof a !== 'string') throw new ToolError(`argv[${i}] must be a string, got ${typeof a}`);
    if (a.includes('\0')) throw new ToolError(`argv[${i}] contains a NUL character`);
    if (i === 0 && a === '') throw new ToolError('argv[0] is empty; it names the program to run');
    return a;
  });
}

function checkEnv(v: unknown): Record<string, string> {
  if (v === undefined) return {};
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (!ENV_NAME.test(k)) throw new ToolError(`env name "${k}" is invalid; use letters, digits and "_"`);
    if (typeof val !== 'string') throw new ToolError(`env.${k} must be a string`);
    if (val.includes('\0')) throw new ToolError(`env.${k} contains a NUL character`);
    out[k] = val;
  }
  return out;
}

/** With an allow list: argv[0] must be a listed bare name; it is resolved here so PATH tricks cannot swap it. */
function resolveAllowed(program: string, allow: readonly string[]): string {
  if (!allow.includes(program)) {
    const list = allow.length ? allow.join(', ') : '(none)';
    throw new ToolError(`program "${program}" is not allowed; tools.shell.allow permits: ${list}`);
  }
  for (const dir of SANDBOX_PATH.split(':')) {
    const candidate = `${dir}/${program}`;
    if (existsSync(candidate)) return candidate;
  }
  throw new ToolError(`program "${program}" is allowed but not installed in ${SANDBOX_PATH}`);
}
