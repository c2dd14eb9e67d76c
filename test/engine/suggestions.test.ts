/**
 * "Did you mean": a mistyped tool name is answered with the closest names by
 * edit distance, and each door says how to list the tools in its own terms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editDistance, similarNames } from '../../src/utils/similar.js';
import { A2eTestClient } from '../helpers/a2e-client.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, postJson, startGateway, type TestGateway } from '../helpers/server.js';

const tool = (name: string) =>
  [{ name, description: `The ${name} tool`, input_parameters: [], tags: ['test'] }, () => ({ name })] as Parameters<
    typeof definePlugin
  >[1][number];

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({
    plugins: [
      definePlugin('names', [echoTool, tool('read_file'), tool('write_file'), tool('count_down'), tool('list_dir')]),
    ],
  });
});
afterAll(() => gw.close());

describe('edit distance', () => {
  it('counts insertions, deletions, substitutions and swapped neighbours', () => {
    expect(editDistance('red_file', 'read_file')).toBe(1);
    expect(editDistance('countdwn', 'count_down')).toBe(2);
    expect(editDistance('ehco', 'echo')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('a', 'abcdef', 2)).toBe(3); // stops early past the limit
  });

  it('suggests close names, closest first, and nothing for unrelated ones', () => {
    expect(similarNames('red_file', ['write_file', 'read_file', 'list_dir'])).toEqual(['read_file']);
    expect(similarNames('countdwn', ['count_down', 'echo'])).toEqual(['count_down']);
    expect(similarNames('prot', ['port', 'host', 'config'])).toEqual(['port']);
    expect(similarNames('frobnicate', ['read_file', 'echo'])).toEqual([]);
  });
});

describe('unknown tools over REST', () => {
  it.each([
    ['red_file', '"read_file"'],
    ['countdwn', '"count_down"'],
    ['READ_FILE', '"read_file"'],
  ])('%s → did you mean %s', async (name, suggestion) => {
    const r = await postJson(`${gw.url}/tool/call`, callBody(name, {}));
    expect(r.status).toBe(404);
    expect(r.json.code).toBe('unknown_tool');
    expect(r.json.message).toMatch(new RegExp(`^no tool named "${name}"\\. Did you mean ${suggestion}`));
  });

  it('a name close to nothing points at POST /tool/list', async () => {
    const r = await postJson(`${gw.url}/tool/call`, callBody('frobnicate', {}));
    expect(r.json.message).toBe('no tool named "frobnicate". POST /tool/list to see the available tools.');
  });
});

describe('unknown tools over the A2E transport', () => {
  it('points at tool/list/req, the way to list tools on that door', async () => {
    const { client } = await A2eTestClient.connect(`${gw.url}/a2e/v1`);
    try {
      const far = await client.request({ type: 'tool/call/req', tool_name: 'frobnicate', arguments: {} });
      expect(far.response).toMatchObject({ type: 'error', code: 'unknown_tool' });
      expect(far.response.message).toBe('no tool named "frobnicate". Send a tool/list/req to see the available tools.');
      const close = await client.request({ type: 'tool/call/req', tool_name: 'red_file', arguments: {} });
      expect(close.response.message).toBe('no tool named "red_file". Did you mean "read_file"?');
    } finally {
      await client.dropStream();
    }
  });
});
