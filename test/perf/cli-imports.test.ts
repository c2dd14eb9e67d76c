/**
 * The client commands (list, call) talk to a running gateway over HTTP: they
 * must not load the server (its routes, engine, tools, config, Hono, zod).
 * Every file the CLI process loads is recorded by module hooks, and each chunk
 * of the bundle counted as the modules it holds (test/helpers/loaded-modules.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { loadedModulesIn } from '../helpers/loaded-modules.js';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { startGateway, type TestGateway } from '../helpers/server.js';

const RECORD_IMPORTS = fileURLToPath(new URL('../fixtures/record-imports.mjs', import.meta.url));
const SERVER_SIDE = [
  /\/src\/server\.ts$/,
  /\/src\/(routes|engine\/engine|tools|config|mcp-server|a2a|transport|security)\//,
  /\/node_modules\/(hono|@hono|zod|pino|@modelcontextprotocol|quickjs)/,
];

let gw: TestGateway;
let dir: string;
beforeAll(async () => {
  gw = await startGateway({ plugins: [definePlugin('imports-test', [echoTool])] });
  dir = mkdtempSync(join(tmpdir(), 'a2e-cli-imports-'));
});
afterAll(async () => {
  await gw.close();
  rmSync(dir, { recursive: true, force: true });
});

async function modulesOf(name: string, args: string[]) {
  const log = join(dir, name);
  const r = await execa('node', ['--import', RECORD_IMPORTS, CLI, ...args], {
    reject: false,
    env: { A2E_IMPORTS_LOG: log, A2E_URL: gw.url },
  });
  return { r, modules: loadedModulesIn(log) };
}

describe('the CLI loads only what a command needs', () => {
  it('list and call load the client, not the server', async () => {
    for (const [name, args] of [
      ['list', ['list']],
      ['call', ['call', 'echo', '--arg', 'text=hi']],
    ] as const) {
      const { r, modules } = await modulesOf(name, [...args]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain(name === 'list' ? 'echo' : 'hi');
      expect(modules).toContainEqual(expect.stringMatching(/\/src\/cli\/client\.ts$/));
      expect(modules.filter((m) => SERVER_SIDE.some((p) => p.test(m)))).toEqual([]);
    }
  });

  it('the recorder sees the server when a command does load it (openapi)', async () => {
    const { r, modules } = await modulesOf('openapi', ['openapi']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(modules).toContainEqual(expect.stringMatching(/\/src\/server\.ts$/));
  });
});
