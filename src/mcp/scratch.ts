/**
 * The quota of a sandboxed stdio MCP server's data directory (its
 * /workspace, see sandbox.ts), and the temporary folder the sandbox probe
 * runs in: `<tmpdir>/a2e-mcp-pid<gateway pid>-<id>-XXXXXX`.
 *
 * The quota is the workspace's (tools.fs.max_workspace_bytes), counted the
 * same way (WorkspaceQuota: `du`-like, by a descriptor walk that follows no
 * link). A long-lived server cannot be stopped at each write, so: no file may
 * grow past the quota (RLIMIT_FSIZE, see sandbox.ts), and the directory is
 * measured a second after calls, every 10 s and before each start; a server
 * whose directory is over it is stopped, and not started again until it is
 * under (connection.ts). Nothing in it is removed: it is the server's data.
 *
 * A gateway that is killed removes nothing: a temporary folder is named after
 * the gateway that made it (older gateways made one per server), and one whose
 * gateway no longer runs is removed when the next sandboxed server starts. A
 * live gateway's folders (another one on the same machine) are never touched.
 */
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolNamePart } from '../wire/tool-name.js';
import { WorkspaceQuota } from '../tools/fs/confinement/quota.js';
import { Workspace } from '../tools/fs/confinement/workspace.js';
import { SANDBOX_GID, SANDBOX_UID } from '../tools/shell/sandbox.js';

const OWNED = /^a2e-mcp-pid(\d+)-/;

/** A new temporary folder for `id`, owned by this gateway (by the sandbox user when the gateway is root). */
export function makeScratch(id: string): string {
  const dir = mkdtempSync(join(tmpdir(), `a2e-mcp-pid${process.pid}-${toolNamePart(id)}-`));
  if (process.getuid?.() === 0) chownSync(dir, SANDBOX_UID, SANDBOX_GID);
  return dir;
}

/** Remove the scratch folders of gateways that no longer run; returns their names. */
export function removeStaleScratch(): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return removed;
  }
  for (const name of names) {
    const pid = Number(OWNED.exec(name)?.[1] ?? NaN);
    if (!Number.isSafeInteger(pid) || pid === process.pid || running(pid)) continue;
    try {
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Another user's (its gateway ran as someone else): theirs to remove.
    }
  }
  return removed;
}

/** Whether a process with this id exists (EPERM: it does, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Measures one data directory against its quota. */
export class ScratchQuota {
  private readonly ws: Workspace;
  private readonly quota: WorkspaceQuota;
  private opened: Promise<void> | undefined;
  private measuring: Promise<number | null> | undefined;

  constructor(
    dir: string,
    readonly limit: number,
  ) {
    this.ws = new Workspace(dir);
    this.quota = new WorkspaceQuota(this.ws, limit);
  }

  /** The bytes the directory holds when they are over the quota, else null (one walk at a time: callers during one share it). */
  over(): Promise<number | null> {
    if (this.measuring) return this.measuring;
    this.measuring = (async () => {
      try {
        this.opened ??= this.ws.init();
        await this.opened;
        const used = await this.quota.measure();
        return used > this.limit ? used : null;
      } finally {
        this.measuring = undefined;
      }
    })();
    return this.measuring;
  }

  async close(): Promise<void> {
    if (this.opened) await this.opened.then(() => this.ws.close()).catch(() => undefined);
  }
}
