/**
 * MCP client process for scenario 8 (b). Modes:
 *   gateway — `runs` calls of `tool` (an MCP-sourced tool) through the gateway's POST /tool/call, one at a time
 *   direct  — `runs` calls of the MCP tool `remote` with the MCP SDK's own Client (Streamable HTTP), one at a time
 * Both send {text} and check the echoed text. Prints per-call latencies (ms) and errors as one JSON line.
 *   node load/mcp.mjs '{"mode":"gateway","url":…,"tool":"peer_echo","runs":200}'
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, request } from 'undici';

const spec = JSON.parse(process.argv[2]);
const dispatcher = new Agent({ connections: 8 });

async function viaGateway(i) {
  const text = `hi ${i}`;
  const body = JSON.stringify({ type: 'tool/call/req', tool_name: spec.tool, arguments: { text } });
  const res = await request(`${spec.url}/tool/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    dispatcher,
  });
  const json = await res.body.json();
  if (res.statusCode !== 200 || json.data?.success !== true || json.data.data?.text !== text) {
    throw new Error(`${res.statusCode} ${JSON.stringify(json).slice(0, 300)}`);
  }
}

let client;
async function direct(i) {
  if (!client) {
    client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(spec.url)));
  }
  const text = `hi ${i}`;
  const result = await client.callTool({ name: spec.remote, arguments: { text } });
  if (result.isError || result.content?.[0]?.text !== text)
    throw new Error(`unexpected result: ${JSON.stringify(result).slice(0, 300)}`);
}

const one = spec.mode === 'direct' ? direct : viaGateway;
const ms = [];
let errors = 0;
let firstError = null;
for (let i = 0; i < spec.runs; i++) {
  const t = performance.now();
  try {
    await one(i);
    ms.push(performance.now() - t);
  } catch (err) {
    errors++;
    firstError ??= String(err.message ?? err);
  }
}
process.stdout.write(`${JSON.stringify({ ms, errors, firstError })}\n`);
await client?.close();
await dispatcher.close();
