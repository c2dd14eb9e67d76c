import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolDefinitionInput } from '../../src/index.js';
import { ToolSearchIndex } from '../../src/engine/search.js';
import { ToolDefinition } from '../../src/protocol/index.js';
import { definePlugin } from '../helpers/plugins.js';
import { postJson, startGateway, type TestGateway } from '../helpers/server.js';

const tool = (
  name: string,
  description: string,
  extra: Partial<ToolDefinitionInput> = {},
): [ToolDefinitionInput, () => unknown] => [{ name, description, ...extra }, () => null];

const catalog = definePlugin('catalog', [
  tool('read_file', 'Read the contents of a file', { tags: ['fs', 'read'] }),
  tool('write_file', 'Write text to a file', { tags: ['fs', 'write'] }),
  tool('http_request', 'Send an HTTP request to a URL', { tags: ['network'] }),
  tool('summarize', 'Summarize text; mentions github only in passing', { tags: ['text'] }),
  tool('github_search', 'Search GitHub repositories and issues', { tags: ['network', 'github'], defer_loading: true }),
  tool('github_pr', 'Open a pull request on GitHub', { tags: ['network', 'github'], defer_loading: true }),
  tool('remote_review', 'Review code remotely', { tags: ['a2a'], kind: 'a2a' }),
  tool('net_fetch', 'Fetch something', { defer_loading: true }),
]);

let gw: TestGateway;
const list = async (body: Record<string, unknown>) => {
  const r = await postJson(`${gw.url}/tool/list`, { type: 'tool/list/req', ...body });
  expect(r.status).toBe(200);
  return r.json;
};
const names = async (body: Record<string, unknown>) => (await list(body)).tools.map((t: { name: string }) => t.name);

beforeAll(async () => {
  gw = await startGateway({ plugins: [catalog] });
});
afterAll(() => gw.close());

describe('POST /tool/list', () => {
  it('answers a tool/list/resp echoing the request id', async () => {
    const r = await list({ id: 'a1b2c3' });
    expect(r).toMatchObject({ type: 'tool/list/resp', req_id: 'a1b2c3', version: '1.0' });
    expect(typeof r.id).toBe('string');
    expect(typeof r.ts).toBe('number');
  });

  it('list mode (empty query) returns the non-deferred tools only, in registry order', async () => {
    expect(await names({})).toEqual(['read_file', 'write_file', 'http_request', 'summarize', 'remote_review']);
    // include_deferred only matters in search mode
    expect(await names({ include_deferred: true })).not.toContain('github_search');
  });

  it('returns full definitions with defaults and kind', async () => {
    const r = await list({ filter_kind: 'a2a' });
    expect(r.tools).toEqual([
      {
        name: 'remote_review',
        description: 'Review code remotely',
        input_parameters: [],
        output_parameters: [],
        streaming: true,
        idempotent: false,
        tags: ['a2a'],
        version: '1.0.0',
        toolkit: null,
        defer_loading: false,
        kind: 'a2a',
      },
    ]);
  });

  it('filter_kind and filter_tags (AND) apply in list mode', async () => {
    expect(await names({ filter_kind: 'native' })).not.toContain('remote_review');
    expect(await names({ filter_tags: ['fs'] })).toEqual(['read_file', 'write_file']);
    expect(await names({ filter_tags: ['fs', 'write'] })).toEqual(['write_file']);
    expect(await names({ filter_tags: ['fs', 'network'] })).toEqual([]);
  });

  it('search mode leaves deferred tools out unless include_deferred is true', async () => {
    expect(await names({ query: 'github' })).toEqual(['summarize']);
    const withDeferred = await names({ query: 'github', include_deferred: true });
    expect(withDeferred).toContain('github_search');
    expect(withDeferred).toContain('github_pr');
  });

  it('search ranks the best match first, not in registry order', async () => {
    // "summarize" is registered before both github tools; a name+tag match must outrank a passing mention.
    const ranked = await names({ query: 'github', include_deferred: true });
    expect(ranked.indexOf('summarize')).toBe(ranked.length - 1);
    // "write file": write_file matches both words in its name and tags; read_file only "file".
    const files = await names({ query: 'write file' });
    expect(files[0]).toBe('write_file');
    expect(files).toContain('read_file');
    expect(await names({ query: 'http url' })).toEqual(['http_request']);
  });

  it('search matches descriptions and tags, and tolerates word forms', async () => {
    expect(await names({ query: 'pull request', include_deferred: true })).toContain('github_pr');
    expect(await names({ query: 'network' })).toEqual(['http_request']);
    expect(await names({ query: 'repositories', include_deferred: true })).toEqual(['github_search']);
    expect(await names({ query: 'readFile' })).toContain('read_file');
  });

  it('filter_kind and filter_tags apply in search mode too', async () => {
    expect(await names({ query: 'github', include_deferred: true, filter_tags: ['github', 'network'] })).toEqual(
      expect.arrayContaining(['github_search', 'github_pr']),
    );
    expect(await names({ query: 'github', include_deferred: true, filter_tags: ['text'] })).toEqual(['summarize']);
    expect(await names({ query: 'review', filter_kind: 'native' })).toEqual([]);
    expect(await names({ query: 'review', filter_kind: 'a2a' })).toEqual(['remote_review']);
  });

  it('a part of a word BM25 misses is found by substring (name, description, tags), after the ranked matches', async () => {
    expect(await names({ query: 'etch', include_deferred: true })).toEqual(['net_fetch']);
    expect(await names({ query: 'ead_fi' })).toEqual(['read_file']);
    expect(await names({ query: 'ETWOR' })).toEqual(['http_request']); // a tag, case-insensitive
    // "file" is ranked by BM25 (read_file, write_file); "ile" alone only by substring, in registry order.
    expect(await names({ query: 'ile' })).toEqual(['read_file', 'write_file']);
    const ranked = await names({ query: 'request' });
    expect(ranked[0]).toBe('http_request');
  });

  it('substring matches follow the BM25 ranking, whatever the registry order', () => {
    const defs = [
      ToolDefinition.parse({ name: 'prefetcher', description: 'Warm caches' }),
      ToolDefinition.parse({ name: 'net_fetch', description: 'Fetch something' }),
    ];
    const index = new ToolSearchIndex(defs);
    expect(index.search('fetch').map((t) => t.name)).toEqual(['net_fetch', 'prefetcher']);
    expect(index.search('  ').map((t) => t.name)).toEqual([]);
  });

  it('a query that matches nothing returns an empty list', async () => {
    expect(await names({ query: 'zzzzqqq' })).toEqual([]);
  });

  it('a plugin with its own searchTools is merged into the ranking', async () => {
    const custom = definePlugin('custom', [tool('alpha_tool', 'first'), tool('beta_tool', 'second')], {
      // Custom strategy: always puts beta first and ignores alpha.
      searchTools: (_q, _tags, tools) => tools.filter((t) => t.name === 'beta_tool'),
    });
    const other = await startGateway({ plugins: [catalog, custom] });
    try {
      const r = await postJson(`${other.url}/tool/list`, { query: 'first second' });
      expect(r.json.tools.map((t: { name: string }) => t.name)).toEqual(['beta_tool']);
    } finally {
      await other.close();
    }
  });

  it('rejects a wrong shape with 400 invalid_request naming the field', async () => {
    const r = await postJson(`${gw.url}/tool/list`, { filter_tags: 'fs' });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'error', code: 'invalid_request' });
    expect(r.json.message).toContain('filter_tags');
  });
});
