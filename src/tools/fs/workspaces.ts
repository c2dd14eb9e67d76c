/**
 * Every workspace the native tools work in, by principal. With a plain tools.fs.root there is one, shared by every
 * caller (opened at start, as it always was). With `{principal}` in it each principal gets its own directory below
 * the one holding them (principal-dir.ts names it), created 0700 on its first call and opened once; the file tools
 * and run_command then work only in the caller's, so nothing one principal does reaches another's files.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ToolError } from '../../engine/index.js';
import { WorkspaceQuota } from './confinement/quota.js';
import { perPrincipal, workspaceDirName } from './principal-dir.js';
import { Workspace } from './confinement/workspace.js';

/** One workspace, with its quota. */
export interface TenantWorkspace {
  /** The principal it belongs to (null: the shared workspace, or a gateway without auth). */
  readonly principal: string | null;
  readonly files: Workspace;
  readonly quota: WorkspaceQuota;
}

/** One workspace as GET /admin/workspaces shows it. */
export interface WorkspaceUsage {
  /** Its directory name (below the directory holding the workspaces). */
  name: string;
  /** The principal, when a call of it opened the workspace on this instance since it started; else null. */
  principal: string | null;
  /** Disk bytes it holds (like `du`). */
  bytes: number;
  /** Its quota, when known here (null: none, or not opened here). */
  quota_bytes: number | null;
  /** When a call last used it (to the minute; the directory's mtime), ISO 8601. */
  last_used: string;
}

/** A principal workspace's directory name (principal-dir.ts): what DELETE /admin/workspaces/{name} accepts. */
const WORKSPACE_NAME = /^(?:[A-Za-z0-9][A-Za-z0-9._-]{0,40}-[0-9a-f]{16}|anonymous)$/;

/** How often a principal's workspace is marked used and checked to be still there (another instance may have deleted it). */
const TOUCH_MS = 10_000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** How long a principal's workspace stays open here without a call (so open descriptors and workers follow active principals). */
const CLOSE_IDLE_MS = 5 * 60 * 1000;

/** Readies a principal's workspace for a plugin when it is first opened (e.g. the shell hands it to its sandbox user). */
export type WorkspacePreparer = (w: TenantWorkspace) => Promise<void>;

export class Workspaces {
  /** Whether each principal has a workspace of its own. */
  readonly perPrincipal: boolean;
  /** The shared workspace's root, or the directory holding the principals' workspaces (absolute). */
  readonly base: string;
  /** The one workspace when it is shared. */
  private readonly shared: TenantWorkspace | null;
  private readonly opened = new Map<string, Promise<TenantWorkspace>>();
  /** When each open workspace was last marked used here. */
  private readonly touched = new Map<string, number>();
  /** Calls using each open workspace now (use()): one in use is never closed as idle. */
  private readonly leases = new Map<string, number>();
  private idleSweep: NodeJS.Timeout | null = null;
  private readonly preparers: WorkspacePreparer[] = [];
  private readonly forgetters: ((w: TenantWorkspace) => Promise<void>)[] = [];
  private users = 0;
  private expiry: NodeJS.Timeout | null = null;

  /**
   * `root`: tools.fs.root as configured; `limitOf`: the quota of a principal's workspace (null: none);
   * `expireIdleDays`: delete a principal's workspace no call used for that long (null: never).
   */
  constructor(
    root: string,
    private readonly limitOf: (principal: string | null) => number | null,
    private readonly expireIdleDays: number | null = null,
    /** A principal's workspace no call used for this long is closed (its descriptor, its file tools worker); reopened on use. */
    private readonly closeIdleMs = CLOSE_IDLE_MS,
  ) {
    this.perPrincipal = perPrincipal(root);
    this.base = this.perPrincipal ? resolve(dirname(root.replace(/\/+$/, ''))) : resolve(root);
    if (this.perPrincipal) {
      this.shared = null;
    } else {
      const files = new Workspace(this.base);
      this.shared = { principal: null, files, quota: new WorkspaceQuota(files, limitOf(null)) };
    }
  }

  /** The shared workspace (null with one per principal). */
  get sharedWorkspace(): TenantWorkspace | null {
    return this.shared;
  }

  /** Make what a plugin needs at start: the shared workspace, or the directory the principals' are made in. Paired with close(). */
  async init(): Promise<void> {
    if (this.shared) return this.shared.files.init();
    this.users++;
    try {
      await mkdir(this.base, { recursive: true });
      if (this.users === 1) {
        this.idleSweep = setInterval(() => void this.closeIdle(), Math.min(this.closeIdleMs, 60_000));
        this.idleSweep.unref();
      }
      if (this.users === 1 && this.expireIdleDays !== null) {
        const sweep = () => void this.expireIdle().catch(() => {});
        sweep();
        this.expiry = setInterval(sweep, Math.min(DAY_MS * this.expireIdleDays, 60 * 60 * 1000));
        this.expiry.unref();
      }
    } catch (err) {
      this.users--;
      throw new Error(
        `the directory holding the workspaces (tools.fs.root without its last component: ${this.base}) cannot be created ` +
          `(${(err as NodeJS.ErrnoException).code ?? 'error'}); set tools.fs.root to a writable place`,
      );
    }
  }

  /** Release one init(); the last one closes every workspace. */
  async close(): Promise<void> {
    if (this.shared) return this.shared.files.close();
    if (this.users === 0 || --this.users > 0) return;
    if (this.expiry) clearInterval(this.expiry);
    if (this.idleSweep) clearInterval(this.idleSweep);
    this.expiry = null;
    this.idleSweep = null;
    const all = [...this.opened.values()];
    this.opened.clear();
    this.touched.clear();
    await Promise.all(
      all.map((p) =>
        p.then(
          (w) => w.files.close(),
          () => {},
        ),
      ),
    );
  }

  /** Run `prepare` on each principal's workspace as it is opened (not on the shared one: the plugin does that at start). */
  onOpen(prepare: WorkspacePreparer): void {
    this.preparers.push(prepare);
  }

  /** Run `forget` when a principal's workspace is closed because it was deleted (or found deleted). */
  onForget(forget: (w: TenantWorkspace) => Promise<void>): void {
    this.forgetters.push(forget);
  }

  /**
   * Run `fn` on the workspace `principal`'s calls work in, which stays open (not closed as idle) until it settles.
   * How every tool call reaches its workspace.
   */
  async use<T>(principal: string | null, fn: (w: TenantWorkspace) => T | Promise<T>): Promise<T> {
    if (this.shared) return fn(this.shared);
    const name = workspaceDirName(principal);
    this.leases.set(name, (this.leases.get(name) ?? 0) + 1);
    try {
      return await fn(await this.of(principal));
    } finally {
      const left = this.leases.get(name)! - 1;
      if (left === 0) this.leases.delete(name);
      else this.leases.set(name, left);
    }
  }

  /** Principals' workspaces open here now. */
  get openCount(): number {
    return this.opened.size;
  }

  /** Close the principals' workspaces no call is using and none used for closeIdleMs. */
  async closeIdle(now = Date.now()): Promise<void> {
    const idle: Promise<TenantWorkspace>[] = [];
    for (const [name, w] of this.opened) {
      if (this.leases.has(name) || now - (this.touched.get(name) ?? 0) < this.closeIdleMs) continue;
      this.opened.delete(name);
      this.touched.delete(name);
      idle.push(w);
    }
    await Promise.all(
      idle.map((p) =>
        p.then(
          (w) => this.forget(w),
          () => {},
        ),
      ),
    );
  }

  /** The workspace `principal`'s calls work in: the shared one, or its own (created and opened on first use). Use it through use(). */
  of(principal: string | null): TenantWorkspace | Promise<TenantWorkspace> {
    if (this.shared) return this.shared;
    const name = workspaceDirName(principal);
    let w = this.opened.get(name);
    if (w && Date.now() - (this.touched.get(name) ?? 0) > TOUCH_MS) {
      this.touched.set(name, Date.now());
      const was = w;
      w = was.then(async (open) => ((await this.stillThere(open)) ? open : this.reopen(name, principal, was)));
    }
    if (!w) {
      this.touched.set(name, Date.now());
      w = this.open(principal, join(this.base, name));
      this.opened.set(name, w);
      // A failed open is tried again by the next call (the disk may have been full).
      w.catch(() => this.opened.get(name) === w && this.opened.delete(name));
    }
    return w;
  }

  /**
   * Mark a workspace used (its mtime, through its descriptor: what idle expiry and GET /admin/workspaces read) and
   * check that its path still leads to it: an admin (or another instance's expiry) may have deleted it.
   */
  private async stillThere(w: TenantWorkspace): Promise<boolean> {
    try {
      const now = new Date();
      await w.files.dir.handle.utimes(now, now);
      const [held, named] = await Promise.all([w.files.dir.handle.stat(), stat(w.files.root)]);
      return held.ino === named.ino && held.dev === named.dev;
    } catch {
      return false;
    }
  }

  /** Open a principal's workspace again, its previous one gone (deleted elsewhere). */
  private async reopen(
    name: string,
    principal: string | null,
    was: Promise<TenantWorkspace>,
  ): Promise<TenantWorkspace> {
    if (this.opened.get(name) === was) this.opened.delete(name);
    await this.forget(await was);
    return this.of(principal);
  }

  private async forget(w: TenantWorkspace): Promise<void> {
    await Promise.allSettled(this.forgetters.map((f) => f(w)));
    await w.files.close();
  }

  /** Every workspace with its usage (the shared one alone, when it is shared). */
  async list(): Promise<WorkspaceUsage[]> {
    if (this.shared) return [await this.usage(basename(this.base), this.shared)];
    const out: WorkspaceUsage[] = [];
    for (const entry of await readdir(this.base, { withFileTypes: true })) {
      if (!entry.isDirectory() || !WORKSPACE_NAME.test(entry.name)) continue;
      const open = await this.opened.get(entry.name)?.catch(() => undefined);
      if (open) {
        out.push(await this.usage(entry.name, open));
        continue;
      }
      // Not open here: measured through a descriptor of its own, as the quota does.
      const files = new Workspace(join(this.base, entry.name));
      try {
        await files.init();
        out.push(
          await this.usage(entry.name, { principal: null, files, quota: new WorkspaceQuota(files, null) }, null),
        );
      } catch {
        // gone meanwhile
      } finally {
        await files.close();
      }
    }
    return out;
  }

  private async usage(name: string, w: TenantWorkspace, quota = w.quota.limit): Promise<WorkspaceUsage> {
    const st = await w.files.dir.handle.stat();
    return {
      name,
      principal: w.principal,
      bytes: await w.quota.measure(),
      quota_bytes: quota,
      last_used: st.mtime.toISOString(),
    };
  }

  /**
   * Delete a principal's workspace and everything in it. Its calls running here lose it (a new call starts an empty
   * one); other instances notice within seconds. GNU rm removes it, never following a symlink a command left in it
   * (it works by descriptors, like the file tools). False when there is none by that name.
   */
  async remove(name: string): Promise<boolean> {
    if (this.shared)
      throw new Error(
        'the workspace is shared (tools.fs.root has no {principal}); there is none per principal to delete',
      );
    if (!WORKSPACE_NAME.test(name)) return false;
    const path = join(this.base, name);
    const st = await stat(path).catch(() => null);
    if (!st?.isDirectory()) return false;
    const open = this.opened.get(name);
    if (open) {
      this.opened.delete(name);
      this.touched.delete(name);
      const w = await open.catch(() => null);
      if (w) await this.forget(w);
    }
    await promisify(execFile)('rm', ['-rf', '--one-file-system', '--', path]);
    return true;
  }

  /** Delete the principals' workspaces no call used for tools.fs.expire_idle_days. */
  async expireIdle(now = Date.now()): Promise<string[]> {
    if (this.shared || this.expireIdleDays === null) return [];
    const removed: string[] = [];
    for (const entry of await readdir(this.base, { withFileTypes: true })) {
      if (!entry.isDirectory() || !WORKSPACE_NAME.test(entry.name)) continue;
      const st = await stat(join(this.base, entry.name)).catch(() => null);
      if (!st || now - st.mtimeMs < this.expireIdleDays * DAY_MS) continue;
      if (await this.remove(entry.name)) removed.push(entry.name);
    }
    return removed;
  }

  private async open(principal: string | null, root: string): Promise<TenantWorkspace> {
    if (this.users === 0) throw new Error('the workspaces are not open (plugin not started)');
    // 0700: only the gateway (and the sandbox user it hands the directory to) may enter it.
    const files = new Workspace(root);
    try {
      await mkdir(root, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      await files.init();
    } catch (err) {
      // Not the host path: the caller sees only that its workspace could not be made, and may try again.
      throw new ToolError(
        `your workspace cannot be created or opened (${(err as NodeJS.ErrnoException).code ?? 'error'}); try again later, ` +
          "or ask the gateway's operator (the directory holding the workspaces, tools.fs.root, must be writable)",
      );
    }
    const w: TenantWorkspace = { principal, files, quota: new WorkspaceQuota(files, () => this.limitOf(principal)) };
    try {
      for (const prepare of this.preparers) await prepare(w);
    } catch (err) {
      await files.close();
      throw err;
    }
    return w;
  }
}
