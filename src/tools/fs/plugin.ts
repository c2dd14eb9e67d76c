/** The file tools plugin: read_file, write_file, edit_file, list_dir, glob, grep — confined to the workspace. */
import type { ToolContext, ToolPlugin } from '../../engine/index.js';
import type { ToolDefinitionInput } from '../../protocol/index.js';
import type { NativeContext } from '../native-context.js';
import type { FsConfig } from './config.js';
import { EDIT_FILE, GLOB, GREP, LIST_DIR, READ_FILE, WRITE_FILE } from './definitions.js';
import { runFsTool, WRITING_TOOLS } from './dispatch.js';
import { FsWorker } from './worker/worker.js';

export function fsPlugin(config: FsConfig, native: NativeContext): ToolPlugin {
  const ws = native.files;
  const quota = native.quota;
  const logger = native.logger.child({ plugin: 'fs' });
  const tools: ToolDefinitionInput[] = config.read_only
    ? [READ_FILE, LIST_DIR, GLOB, GREP]
    : [READ_FILE, WRITE_FILE, EDIT_FILE, LIST_DIR, GLOB, GREP];

  /**
   * Where the tools run, decided at the first call (after every plugin started, so after the shell sandbox
   * handed the workspace to its user): in a worker with the workspace owner's identity when the gateway is
   * root and the workspace is not root's; here otherwise.
   */
  let worker: Promise<FsWorker | null> | null = null;
  /** Set once the choice is made and it is "here": then a call runs without waiting on it. */
  let here = false;
  const chooseWorker = async (): Promise<FsWorker | null> => {
    if (!config.privilege_separation || process.getuid?.() !== 0) return null;
    const st = await ws.dir.handle.stat();
    if (st.uid === 0) return null;
    logger.info({ uid: st.uid, gid: st.gid }, 'file tools run in a worker with the workspace owner\'s identity, not as root');
    return new FsWorker(ws, { uid: st.uid, gid: st.gid }, config, quota.limit, logger);
  };

  return {
    name: 'fs',
    listTools: () => tools,
    async start() {
      await ws.init();
    },
    async stop() {
      const w = await worker?.catch(() => null);
      worker = null;
      here = false;
      await w?.stop();
      await ws.close();
    },
    executeTool(name: string, args: Record<string, unknown>, ctx: ToolContext) {
      if (here) return runFsTool(ws, quota, config, name, args, ctx);
      return viaChoice(name, args, ctx);
    },
  };

  async function viaChoice(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    const w = await (worker ??= chooseWorker());
    if (!w) {
      here = true;
      return runFsTool(ws, quota, config, name, args, ctx);
    }
    const writes = WRITING_TOOLS.has(name);
    const used = writes ? await quota.usage() : null;
    const done = await w.run(name, args, ctx, used);
    if (writes && used !== null && done.used !== null) quota.add(done.used - used);
    return done.result;
  }
}
