/** The file tools plugin: read_file, write_file, edit_file, list_dir, glob, grep — confined to the workspace. */
import type { ToolContext, ToolPlugin } from '../../engine/index.js';
import type { ToolDefinitionInput } from '../../protocol/index.js';
import type { NativeContext } from '../index.js';
import type { FsConfig } from './config.js';
import { EDIT_FILE, GLOB, GREP, LIST_DIR, READ_FILE, WRITE_FILE } from './definitions.js';
import { grepTool, type GrepArgs } from './grep.js';
import { globTool, listDirTool } from './list.js';
import { readFileTool, type ReadArgs } from './read.js';
import { editFileTool, writeFileTool, type EditArgs, type WriteArgs } from './write.js';

export function createFsPlugin(config: FsConfig, native: NativeContext): ToolPlugin {
  const ws = native.files;
  const quota = native.quota;
  const tools: ToolDefinitionInput[] = config.read_only
    ? [READ_FILE, LIST_DIR, GLOB, GREP]
    : [READ_FILE, WRITE_FILE, EDIT_FILE, LIST_DIR, GLOB, GREP];

  return {
    name: 'fs',
    listTools: () => tools,
    async start() {
      await ws.init();
    },
    async stop() {
      await ws.close();
    },
    executeTool(name: string, args: Record<string, unknown>, ctx: ToolContext) {
      switch (name) {
        case 'read_file':
          return readFileTool(ws, args as unknown as ReadArgs, config.max_read_bytes, ctx.signal);
        case 'write_file':
          return writeFileTool(ws, args as unknown as WriteArgs, config.max_write_bytes, quota);
        case 'edit_file':
          return editFileTool(ws, args as unknown as EditArgs, { maxRead: config.max_read_bytes, maxWrite: config.max_write_bytes }, quota);
        case 'list_dir':
          return listDirTool(ws, args as { path: string; recursive?: boolean; limit?: number }, ctx.signal);
        case 'glob':
          return globTool(ws, args as { pattern: string; path?: string; limit?: number }, ctx);
        case 'grep':
          return grepTool(ws, args as unknown as GrepArgs, config.max_read_bytes, ctx);
        default:
          throw new Error(`fs plugin has no tool "${name}"`);
      }
    },
  };
}
