/** The file tools plugin: read_file, write_file, edit_file, list_dir, glob, grep — confined to the caller's workspace. */
import type { ToolContext, ToolPlugin } from '../../engine/index.js';
import type { ToolDefinitionInput } from '../../protocol/index.js';
import type { NativeContext } from '../native-context.js';
import type { FsConfig } from './config.js';
import { EDIT_FILE, GLOB, GREP, LIST_DIR, READ_FILE, WRITE_FILE } from './definitions.js';
import { runFsTool, WRITING_TOOLS } from './dispatch.js';
import { FsWorker } from './worker/worker.js';
import type { TenantWorkspace, Workspaces } from './workspaces.js';

export function fsPlugin(config: FsConfig, native: NativeContext): ToolPlugin & { readonly workspaces: Workspaces } {
  const workspaces = native.workspaces;
  const shared = workspaces.sharedWorkspace;
  const logger = native.logger.child({ plugin: 'fs' });
  const tools: ToolDefinitionInput[] = config.read_only
    ? [READ_FILE, LIST_DIR, GLOB, GREP]
    : [READ_FILE, WRITE_FILE, EDIT_FILE, LIST_DIR, GLOB, GREP];

  /**
   * Where the tools run on a workspace, decided at its first call (after every plugin started or prepared it, so
   * after the shell sandbox handed it to its user): in a worker with the workspace owner's identity when the
   * gateway is root and the workspace is not root's; here otherwise. One per workspace.
   */
  const workers = new Map<TenantWorkspace, Promise<FsWorker | null>>();
  /** Set once the shared workspace's choice is made and it is "here": then a call runs without waiting on it. */
  let here = false;
  const chooseWorker = async (w: TenantWorkspace): Promise<FsWorker | null> => {
    if (!config.privilege_separation || process.getuid?.() !== 0) return null;
    const st = await w.files.dir.handle.stat();
    if (st.uid === 0) return null;
    logger.info(
      { uid: st.uid, gid: st.gid },
      "file tools run in a worker with the workspace owner's identity, not as root",
    );
    return new FsWorker(w.files, { uid: st.uid, gid: st.gid }, config, w.quota.limit, logger);
  };

  // A deleted workspace's worker holds its old directory: stopped with it.
  workspaces.onForget(async (w) => {
    const worker = workers.get(w);
    workers.delete(w);
    await (await worker?.catch(() => null))?.stop();
  });

  return {
    name: 'fs',
    workspaces,
    listTools: () => tools,
    async start() {
      await workspaces.init();
    },
    async stop() {
      const all = [...workers.values()];
      workers.clear();
      here = false;
      await Promise.all(all.map(async (p) => (await p.catch(() => null))?.stop()));
      await workspaces.close();
    },
    executeTool(name: string, args: Record<string, unknown>, ctx: ToolContext) {
      if (here && shared) return runFsTool(shared.files, shared.quota, config, name, args, ctx);
      return viaChoice(name, args, ctx);
    },
  };

  function viaChoice(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    return workspaces.use(ctx.principal, (ws) => inWorkspace(ws, name, args, ctx));
  }

  async function inWorkspace(
    ws: TenantWorkspace,
    name: string,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<unknown> {
    let choice = workers.get(ws);
    if (!choice) workers.set(ws, (choice = chooseWorker(ws)));
    const w = await choice;
    if (!w) {
      if (ws === shared) here = true;
      return runFsTool(ws.files, ws.quota, config, name, args, ctx);
    }
    const writes = WRITING_TOOLS.has(name);
    const used = writes ? await ws.quota.usage() : null;
    // A principal's quota follows its token (a reload, a JWT with other claims): sent with each write.
    const done = await w.run(name, args, ctx, used, writes && ws !== shared ? ws.quota.limit : undefined);
    if (writes && used !== null && done.used !== null) ws.quota.add(done.used - used);
    return done.result;
  }
}
