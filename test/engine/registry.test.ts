import { describe, expect, it } from 'vitest';
import { createGateway, createLogger, defineConfig, type ToolPlugin } from '../../src/index.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';

const build = (plugins: ToolPlugin[]) =>
  createGateway({ config: defineConfig({ server: { port: 0 } }), plugins, logger: createLogger('silent') });

describe('plugin registry', () => {
  it('two plugins offering one tool name is a start-up error naming both', async () => {
    await expect(build([definePlugin('first', [echoTool]), definePlugin('second', [echoTool])])).rejects.toThrow(
      'tool "echo" is offered by both plugin "first" and plugin "second"',
    );
  });

  it('an invalid tool definition is a start-up error naming the plugin, tool and field', async () => {
    const bad = definePlugin('broken', [
      [
        { name: 'bad', description: 'x', input_parameters: [{ name: 'p', type: 'date' as never, description: '' }] },
        () => null,
      ],
    ]);
    await expect(build([bad])).rejects.toThrow(
      /plugin "broken" offers an invalid tool definition "bad": input_parameters\.0\.type/,
    );
  });

  it('a parameter declared twice is a start-up error', async () => {
    const dup = definePlugin('dup', [
      [
        {
          name: 'd',
          description: 'x',
          input_parameters: [
            { name: 'a', type: 'string', description: '' },
            { name: 'a', type: 'integer', description: '' },
          ],
        },
        () => null,
      ],
    ]);
    await expect(build([dup])).rejects.toThrow('plugin "dup", tool "d": input parameter "a" is declared twice');
  });

  it('a plugin whose start() fails stops start-up with its name', async () => {
    const failing: ToolPlugin = {
      name: 'flaky',
      listTools: () => [],
      executeTool: () => null,
      start: () => Promise.reject(new Error('no connection')),
    };
    await expect(build([failing])).rejects.toThrow('plugin "flaky" failed to start: no connection');
  });

  it('a dynamic plugin that changes its tools at run time is picked up; its clashes are skipped and reported', async () => {
    let tools = [echoTool[0]];
    let changed: () => void = () => {};
    const dynamic: ToolPlugin = {
      name: 'remote',
      dynamic: true,
      listTools: () => tools,
      executeTool: () => ({ from: 'remote' }),
      start: (host) => {
        changed = host.toolsChanged;
      },
    };
    const gw = await build([definePlugin('local', [echoTool]), dynamic]);
    try {
      expect(gw.registry.conflicts).toEqual([{ tool: 'echo', kept: 'local', skipped: 'remote' }]);
      expect(gw.registry.get('echo')!.plugin.name).toBe('local');
      tools = [echoTool[0], { name: 'remote_only', description: 'new' }];
      changed();
      expect(gw.registry.get('remote_only')!.plugin.name).toBe('remote');
      expect(gw.registry.get('echo')!.plugin.name).toBe('local');
    } finally {
      await gw.close();
    }
  });
});
