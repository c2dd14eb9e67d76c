/**
 * RemoteToolSet (engine/remote-tool-set.ts), the merge the A2A and MCP
 * plugins share, on its own: configuration order wins a name, each clash is
 * reported once, the host hears only real changes, a dropped tool's error
 * names no door, and a source's contribution separates what it lost.
 */
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/index.js';
import { RemoteToolSet, type RemoteClash, type RemoteTool } from '../../src/engine/remote-tool-set.js';

const tool = (name: string, description = `tool ${name}`): RemoteTool => ({ name, definition: { name, description } });
const source = (id: string, tools: RemoteTool[]) => ({ id, tools });

function setUp() {
  const clashes: RemoteClash[] = [];
  let changes = 0;
  const set = new RemoteToolSet<RemoteTool, ReturnType<typeof source>>({
    noun: 'MCP server',
    onClash: (c) => clashes.push(c),
    onChange: () => changes++,
  });
  return { set, clashes, changes: () => changes };
}

describe('RemoteToolSet', () => {
  it('merges in configuration order: an earlier source keeps a name, the clash is reported once', () => {
    const { set, clashes, changes } = setUp();
    const a = source('a', [tool('x_one'), tool('shared')]);
    const b = source('b', [tool('shared', 'b version'), tool('x_two')]);
    set.rebuild([a, b]);
    expect(set.definitions.map((d) => d.name)).toEqual(['x_one', 'shared', 'x_two']);
    expect(set.lookup('shared').source).toBe(a);
    expect(clashes).toEqual([{ tool: 'shared', source: 'b', kept: 'a' }]);
    expect(changes()).toBe(1);

    // The same lists again: no new report, no change for the host.
    set.rebuild([a, b]);
    expect(clashes).toHaveLength(1);
    expect(changes()).toBe(1);

    // A changed description is a change; the clash is still the old one.
    const b2 = source('b', [tool('shared', 'b version'), tool('x_two', 'new words')]);
    set.rebuild([a, b2]);
    expect(changes()).toBe(2);
    expect(clashes).toHaveLength(1);

    // a drops the name: b gets it, and a later clash of the same pair would be reported again.
    const a2 = source('a', [tool('x_one')]);
    set.rebuild([a2, b2]);
    expect(set.lookup('shared').source).toBe(b2);
    expect(set.definitions.find((d) => d.name === 'shared')!.description).toBe('b version');
    set.rebuild([a, b2]);
    expect(clashes).toEqual([
      { tool: 'shared', source: 'b', kept: 'a' },
      { tool: 'shared', source: 'b', kept: 'a' },
    ]);
  });

  it('a tool no longer offered fails with a door-agnostic hint', () => {
    const { set } = setUp();
    set.rebuild([source('a', [tool('a_gone')])]);
    set.rebuild([source('a', [])]);
    expect(() => set.lookup('a_gone')).toThrow(ToolError);
    expect(() => set.lookup('a_gone')).toThrow(
      'tool "a_gone" is no longer offered by its MCP server; list the tools again to see the current ones',
    );
  });

  it("reports each source's callable tools, its clashes and what a local plugin kept", () => {
    const { set } = setUp();
    const a = source('a', [tool('a_one'), tool('a_two'), tool('both')]);
    const b = source('b', [tool('both'), tool('b_one')]);
    set.rebuild([a, b]);
    const conflicts = [
      { tool: 'a_two', kept: 'local', skipped: 'mcp' },
      { tool: 'b_one', kept: 'local', skipped: 'other-plugin' },
    ];
    expect(set.contribution(a, conflicts, 'mcp')).toEqual({
      tools: ['a_one', 'both'],
      clashes: [],
      lost: [{ tool: 'a_two', kept: 'local' }],
    });
    // b_one's conflict belongs to another plugin's tool of that name, not to this plugin.
    expect(set.contribution(b, conflicts, 'mcp')).toEqual({
      tools: ['b_one'],
      clashes: [{ tool: 'both', source: 'b', kept: 'a' }],
      lost: [],
    });
  });
});
