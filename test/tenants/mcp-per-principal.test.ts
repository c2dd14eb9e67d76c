/**
 * mcp.servers.<id>.per_principal (issue 57): a real @modelcontextprotocol/server-memory, in the sandbox, one
 * instance per principal. Two tokens, two graphs: neither sees the other's entities; the tools are listed once; each
 * graph is a file in the principal's own data directory; max_instances stops the least recently used idle instance
 * (whose graph survives on disk), and idle_s stops an instance nobody calls.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../src/index.js';
import { workspaceDirName } from '../../src/tools/fs/principal-dir.js';
import { postJson, startGateway, type TestGateway } from '../helpers/server.js';
import { sha256 } from '../security/helpers.js';
import { processTree, waitFor } from '../tools/procs.js';

const TOKENS = { alice: `alice-${randomUUID()}`, bob: `bob-${randomUUID()}`, carol: `carol-${randomUUID()}` };
type Who = keyof typeof TOKENS;

let state: string;
let gw: TestGateway;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), 'a2e-mcp-tenants-'));
  chmodSync(state, 0o755); // the sandbox user must reach the data directories inside it
  gw = await startGateway({
    config: {
      auth: { tokens: Object.entries(TOKENS).map(([name, t]) => ({ name, token_sha256: sha256(t) })) },
      sessions: { required: false },
      server: { state_dir: state },
      mcp: {
        start_wait_ms: 60_000,
        servers: {
          memory: {
            command: resolve('node_modules/.bin/mcp-server-memory'),
            env: { MEMORY_FILE_PATH: '/workspace/memory.jsonl' },
            per_principal: true,
            max_instances: 2,
            idle_s: 3,
          },
        },
      },
    },
  });
}, 120_000);

afterAll(async () => {
  await gw?.close();
  rmSync(state, { recursive: true, force: true });
});

async function call(who: Who, tool: string, args: Record<string, unknown>): Promise<any> {
  const r = await postJson(
    `${gw.url}/tool/call`,
    { type: 'tool/call/req', tool_name: tool, arguments: args, timeout: 60 },
    { Authorization: `Bearer ${TOKENS[who]}` },
  );
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  expect(r.json.data.success, JSON.stringify(r.json.data)).toBe(true);
  return r.json.data;
}

const graphOf = async (who: Who) => JSON.stringify((await call(who, 'memory_read_graph', {})).data);
const dataDir = (who: Who) => join(state, 'mcp', 'memory', workspaceDirName(who));
/** The principal's running instance: processes whose command line names its data directory. */
const instanceOf = (who: Who) => processTree(dataDir(who)).size > 0;

describe('a per-principal MCP server (server-memory)', () => {
  it("lists its tools once, though no principal's instance runs yet", async () => {
    const r = await postJson(
      `${gw.url}/tool/list`,
      { type: 'tool/list/req', include_deferred: true },
      { Authorization: `Bearer ${TOKENS.alice}` },
    );
    const names = (r.json.tools as { name: string }[]).map((t) => t.name).filter((n) => n === 'memory_create_entities');
    expect(names).toEqual(['memory_create_entities']);
    expect(instanceOf('alice') || instanceOf('bob')).toBe(false);
  });

  it("two tokens, two graphs: neither sees the other's entities", async () => {
    await call('alice', 'memory_create_entities', {
      entities: [{ name: 'AliceSecret', entityType: 'note', observations: ['only alice knows'] }],
    });
    await call('bob', 'memory_create_entities', {
      entities: [{ name: 'BobThing', entityType: 'note', observations: ['bob wrote this'] }],
    });
    const alice = await graphOf('alice');
    const bob = await graphOf('bob');
    expect(alice).toContain('AliceSecret');
    expect(alice).not.toContain('BobThing');
    expect(bob).toContain('BobThing');
    expect(bob).not.toContain('AliceSecret');
    const found = JSON.stringify((await call('bob', 'memory_search_nodes', { query: 'alice' })).data);
    expect(found).not.toContain('AliceSecret');
    // Each graph is a file in the principal's own data directory.
    expect(readFileSync(join(dataDir('alice'), 'memory.jsonl'), 'utf8')).toContain('AliceSecret');
    expect(readFileSync(join(dataDir('bob'), 'memory.jsonl'), 'utf8')).not.toContain('AliceSecret');
    expect(instanceOf('alice') && instanceOf('bob')).toBe(true);
  }, 120_000);

  it('at max_instances a new principal stops the least recently used idle instance, whose graph survives', async () => {
    await graphOf('bob'); // alice's is now the least recently used
    await call('carol', 'memory_create_entities', {
      entities: [{ name: 'CarolNote', entityType: 'note', observations: [] }],
    });
    await waitFor("alice's instance to stop", () => (instanceOf('alice') ? undefined : true), 20_000);
    expect(instanceOf('bob')).toBe(true);
    // Alice's next call starts hers again, from her graph on disk.
    const alice = await graphOf('alice');
    expect(alice).toContain('AliceSecret');
    expect(alice).not.toContain('CarolNote');
  }, 120_000);

  it('stops an instance after idle_s without a call', async () => {
    await graphOf('carol');
    await waitFor(
      'every instance to stop after idle_s',
      () => (['alice', 'bob', 'carol'].some((w) => instanceOf(w as Who)) ? undefined : true),
      30_000,
    );
    expect(await graphOf('carol')).toContain('CarolNote');
  }, 120_000);

  it('per_principal needs a stdio server, in the sandbox', () => {
    expect(() =>
      defineConfig({ mcp: { servers: { x: { url: 'http://127.0.0.1:1/mcp', per_principal: true } } } }),
    ).toThrow(/per_principal needs a stdio server/);
    expect(() =>
      defineConfig({ mcp: { servers: { x: { command: 'x', sandbox: false, per_principal: true } } } }),
    ).toThrow(/per_principal needs the sandbox/);
  });
});

describe('a per-principal MCP server with every instance busy', () => {
  let busy: TestGateway;
  let dir: string;
  const token = (n: string) => `${n}-busy-token-0123456789abcdef`;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-mcp-busy-'));
    chmodSync(dir, 0o755);
    busy = await startGateway({
      config: {
        auth: { tokens: ['ann', 'ben'].map((name) => ({ name, token_sha256: sha256(token(name)) })) },
        sessions: { required: false },
        server: { state_dir: dir },
        mcp: {
          start_wait_ms: 60_000,
          servers: {
            everything: {
              command: resolve('node_modules/.bin/mcp-server-everything'),
              args: ['stdio'],
              per_principal: true,
              max_instances: 1,
            },
          },
        },
      },
    });
  }, 120_000);
  afterAll(async () => {
    await busy?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const callAs = (name: string, tool: string, args: Record<string, unknown>) =>
    postJson(
      `${busy.url}/tool/call`,
      { type: 'tool/call/req', tool_name: tool, arguments: args, timeout: 60 },
      { Authorization: `Bearer ${token(name)}` },
    );

  it('refuses a new principal with a retryable error while the only instance is busy, and serves it once it is idle', async () => {
    const long = callAs('ann', 'everything_trigger-long-running-operation', { duration: 4, steps: 4 });
    await waitFor(
      "ann's instance to run",
      () => (processTree(join(dir, 'mcp', 'everything', workspaceDirName('ann'))).size > 0 ? true : undefined),
      30_000,
    );
    const refused = await callAs('ben', 'everything_echo', { message: 'hi' });
    expect(refused.json.data.success).toBe(false);
    expect(refused.json.data.error).toMatch(
      /all 1 \(mcp\.servers\.everything\.max_instances\) are busy with calls; retry in a few seconds/,
    );
    expect(refused.json.data.data).toEqual({ retryable: true, retry_after_s: 5 });
    expect((await long).json.data.success, JSON.stringify((await long).json)).toBe(true);
    const served = await callAs('ben', 'everything_echo', { message: 'hi' });
    expect(served.json.data.success, JSON.stringify(served.json)).toBe(true);
  }, 120_000);
});
