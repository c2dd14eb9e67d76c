/**
 * Every workspace the native tools work in, by principal. With a plain tools.fs.root there is one, shared by every
 * caller (opened at start, as it always was). With `{principal}` in it each principal gets its own directory below
 * the one holding them (principal-dir.ts names it), created 0700 on its first call and opened once; the file tools
 * and run_command then work only in the caller's, so nothing one principal does reaches another's files.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ToolError } from '../../engine/index.js';
import { WorkspaceQuota } from './quota.js';
import { perPrincipal, workspaceDirName } from './principal-dir.js';
import { Workspace } from './workspace.js';

/** One workspace, with its quota. */
export interface TenantWorkspace {
  /** The principal it belongs to (null: the shared workspace, or a gateway without auth). */
  readonly principal: string | null;
  readonly files: Workspace;
  readonly quota: WorkspaceQuota;
}

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
  private readonly preparers: WorkspacePreparer[] = [];
  private users = 0;

  /** `root`: tools.fs.root as configured; `limitOf`: the quota of a principal's workspace (null: none). */
  constructor(
    root: string,
    private readonly limitOf: (principal: string | null) => number | null,
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
    const all = [...this.opened.values()];
    this.opened.clear();
    await Promise.all(all.map((p) => p.then((w) => w.files.close(), () => {})));
  }

  /** Run `prepare` on each principal's workspace as it is opened (not on the shared one: the plugin does that at start). */
  onOpen(prepare: WorkspacePreparer): void {
    this.preparers.push(prepare);
  }

  /** The workspace `principal`'s calls work in: the shared one, or its own (created and opened on first use). */
  of(principal: string | null): TenantWorkspace | Promise<TenantWorkspace> {
    if (this.shared) return this.shared;
    const name = workspaceDirName(principal);
    let w = this.opened.get(name);
    if (!w) {
      w = this.open(principal, join(this.base, name));
      this.opened.set(name, w);
      // A failed open is tried again by the next call (the disk may have been full).
      w.catch(() => this.opened.get(name) === w && this.opened.delete(name));
    }
    return w;
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
          'or ask the gateway\'s operator (the directory holding the workspaces, tools.fs.root, must be writable)',
      );
    }
    const w: TenantWorkspace = { principal, files, quota: new WorkspaceQuota(files, this.limitOf(principal)) };
    try {
      for (const prepare of this.preparers) await prepare(w);
    } catch (err) {
      await files.close();
      throw err;
    }
    return w;
  }
}
