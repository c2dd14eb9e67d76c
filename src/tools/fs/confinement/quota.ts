/**
 * The workspace quota (tools.fs.max_workspace_bytes): disk bytes the
 * workspace may hold, counted like `du` (allocated blocks, a hard-linked file
 * once). It is measured by a descriptor walk of the whole workspace on first
 * use and after every run_command (the only writer that is not a file tool),
 * and kept up to date by write_file and edit_file, which refuse a write that
 * would cross it. A command cannot be stopped half-way by it: run_command
 * caps each file at what is left (RLIMIT_FSIZE) and checks at its boundaries.
 */
import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { ToolError } from '../../../engine/index.js';
import { walk } from './walk.js';
import type { Workspace } from './workspace.js';

const BLOCK = 4096;
const NEVER = new AbortController().signal;

/** Disk bytes an inode takes (allocated 512-byte blocks). */
export const diskBytes = (st: Pick<Stats, 'blocks'>): number => st.blocks * 512;

/** Disk bytes a new file of `size` bytes will take, before it is written (whole 4 KiB blocks). */
export const estimateDiskBytes = (size: number): number => Math.ceil(size / BLOCK) * BLOCK;

export class WorkspaceQuota {
  private used: number | null = null;
  private measuring: Promise<number> | null = null;

  private readonly limitOf: () => number | null;

  /**
   * `limit`: bytes, or null for no quota (then nothing is ever measured); a function when it may change (a
   * principal's token quota, read at each use so a reload or a JWT with other claims takes effect).
   */
  constructor(
    private readonly ws: Workspace,
    limit: number | null | (() => number | null),
  ) {
    this.limitOf = typeof limit === 'function' ? limit : () => limit;
  }

  /** Bytes the workspace may hold, or null for no quota. */
  get limit(): number | null {
    return this.limitOf();
  }

  /** Bytes the workspace holds: measured once, then kept up to date (null without a quota). */
  async usage(): Promise<number | null> {
    if (this.limit === null) return null;
    return this.used ?? this.measure();
  }

  /** Measure the workspace now (one walk at a time; callers during a walk share it). */
  measure(): Promise<number> {
    this.measuring ??= this.walk().finally(() => (this.measuring = null));
    return this.measuring;
  }

  private async walk(): Promise<number> {
    let total = diskBytes(await this.ws.dir.handle.stat());
    const linked = new Set<number>();
    for await (const e of walk(this.ws.dir, { recursive: true, signal: NEVER, maxDepth: 1024 })) {
      const st = await lstat(e.at).catch(() => null);
      if (!st) continue;
      if (st.nlink > 1 && !st.isDirectory()) {
        if (linked.has(st.ino)) continue;
        linked.add(st.ino);
      }
      total += diskBytes(st);
    }
    this.used = total;
    return total;
  }

  /** Start from a usage measured elsewhere (the privilege-separated worker gets the gateway's with each write). */
  seed(used: number | null): void {
    this.used = used;
  }

  /** The usage as last measured or updated (null before the first measurement). */
  get known(): number | null {
    return this.used;
  }

  /** Account for a change made by a file tool. */
  add(delta: number): void {
    if (this.used !== null) this.used = Math.max(0, this.used + delta);
  }

  /** Refuse a file tool write that would grow the workspace by `grow` bytes past the limit. */
  async reserve(grow: number, shown: string): Promise<void> {
    const used = await this.usage();
    if (used === null || this.limit === null || grow <= 0 || used + grow <= this.limit) return;
    throw new ToolError(
      `writing ${shown} would take the workspace to ${used + grow} bytes, over its quota of ${this.limit} bytes ` +
        `(tools.fs.max_workspace_bytes; ${used} bytes in use); delete files first, or raise the limit`,
    );
  }

  /** The error for a workspace found over its quota after a command, or null when it is within it. */
  overMessage(used: number): string | null {
    if (this.limit === null || used <= this.limit) return null;
    return (
      `the workspace now holds ${used} bytes, over its quota of ${this.limit} bytes (tools.fs.max_workspace_bytes): ` +
      'write_file and edit_file are refused and commands cannot write files until files are deleted (e.g. run_command ["rm", …])'
    );
  }
}
