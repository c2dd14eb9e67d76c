#!/usr/bin/env node
/**
 * The gateway as an MCP client, for the conformance runner's client scenarios: the runner starts its test
 * server and runs `node scripts/conformance-client.mjs <server url>`. This starts a gateway (dist/cli.js) with
 * that server as its only `mcp.servers` source ("up"), waits until the gateway has connected to it, then calls
 * every tool it re-serves through the gateway's own /mcp door, with arguments made from each tool's inputSchema.
 * What the runner checks is what the gateway's client sent it. Exit code 0 when every step worked.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const serverUrl = process.argv[2];
if (!serverUrl) {
  console.error('usage: conformance-client.mjs <MCP server URL> (the conformance runner passes it)');
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'a2e-conformance-client-'));
writeFileSync(
  join(dir, 'gateway.yaml'),
  `server:\n  port: 0\nmcp:\n  start_wait_ms: 10000\n  servers:\n    up:\n      url: ${JSON.stringify(serverUrl)}\n`,
);
const gateway = spawn(process.execPath, [join(root, 'dist/cli.js'), 'serve', '--config', join(dir, 'gateway.yaml')], {
  env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const fail = (message) => {
  console.error(`conformance client: ${message}`);
  process.exitCode = 1;
};

try {
  const base = await new Promise((resolve, reject) => {
    let out = '';
    gateway.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    gateway.once('exit', (code) =>
      reject(new Error(`the gateway exited (${code}) before listening; run npm run build first`)),
    );
  });
  // Wait for the gateway's connection to the runner's server (or its failure).
  const deadline = Date.now() + 20_000;
  let server;
  for (;;) {
    server = (await (await fetch(`${base}/mcp-servers`)).json()).servers.find((s) => s.id === 'up');
    if (server.state === 'ready' || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (server.state !== 'ready')
    throw new Error(`the gateway did not connect to ${serverUrl}: ${server.state} (${server.last_error})`);
  const rpc = async (id, method, params) => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    return res.json();
  };
  const { result } = await rpc(1, 'tools/list', {});
  let id = 2;
  for (const tool of result.tools.filter((t) => t.name.startsWith('up_'))) {
    const answer = await rpc(id++, 'tools/call', { name: tool.name, arguments: argumentsFor(tool.inputSchema) });
    console.log(`${tool.name}: ${JSON.stringify(answer.result ?? answer.error).slice(0, 300)}`);
    if (answer.error) fail(`${tool.name} failed: ${answer.error.message}`);
  }
} catch (err) {
  fail(err.message);
} finally {
  gateway.kill('SIGTERM');
  await new Promise((r) => (gateway.exitCode === null ? gateway.once('exit', r) : r()));
  rmSync(dir, { recursive: true, force: true });
}

/** Small values of the right type for every required property (numbers 1, 2, …). */
function argumentsFor(schema) {
  const args = {};
  let n = 1;
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
    args[name] =
      type === 'number' || type === 'integer'
        ? n++
        : type === 'boolean'
          ? true
          : type === 'array'
            ? []
            : type === 'object'
              ? {}
              : 'test';
  }
  return args;
}
