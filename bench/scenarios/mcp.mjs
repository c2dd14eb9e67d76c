/**
 * Scenario 8 — MCP both ways.
 *  (a) the gateway as an MCP server: `tools/call` of echo at POST /mcp vs the same echo through
 *      POST /tool/call on the same gateway, vs the MCP SDK's own stateless Streamable HTTP server
 *      (scenario 1's baseline). autocannon with 50 connections; rounds interleaved; each server's CPU
 *      per call (from /proc) is reported next to req/s.
 *  (b) an MCP server as a tool source: its echo called through the gateway (POST /tool/call) vs the
 *      same server called directly with the SDK's own Client; calls one after another, rounds interleaved.
 */
import { readFileSync } from 'node:fs';
import { runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { warmUp, postJson, rateRow, rpsOf } from '../lib/rounds.mjs';
import { fmt, median, pairedRatio } from '../lib/stats.mjs';

const ECHO_BODY = JSON.stringify({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' } });
const MCP_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: 'hi' } },
});
/** What an MCP client sends (the spec asks it to accept both). */
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

const TARGETS = [
  {
    key: 'mcp',
    label: 'a2e-gateway `POST /mcp` `tools/call` (echo)',
    path: '/mcp',
    body: MCP_BODY,
    headers: MCP_HEADERS,
  },
  { key: 'rest', label: 'a2e-gateway `POST /tool/call` (echo)', path: '/tool/call', body: ECHO_BODY },
  {
    key: 'sdk',
    label: 'MCP SDK Streamable HTTP (stateless, JSON), echo',
    path: '/mcp',
    body: MCP_BODY,
    headers: MCP_HEADERS,
  },
];

/** CPU time (user + system) a process has used so far, µs, from /proc (USER_HZ 100). */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const pct = (values, p) => {
  const v = [...values].sort((a, b) => a - b);
  return v.length ? v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))] : NaN;
};

async function checkAnswer(t, url) {
  const { status, json } = await postJson(url, t.body, t.headers);
  const text = t.key === 'rest' ? json.data?.data?.text : json.result?.structuredContent?.text;
  if (status !== 200 || text !== 'hi' || json.result?.isError)
    throw new Error(`${t.label} answered ${status} ${JSON.stringify(json)}`);
}

/** Wait until the gateway's MCP server `peer` is ready (it connects after the gateway listens). */
async function peerReady(gatewayUrl) {
  const until = Date.now() + 30_000;
  for (;;) {
    const peer = (await (await fetch(`${gatewayUrl}/mcp-servers`)).json()).servers.find((s) => s.id === 'peer');
    if (peer?.state === 'ready') return;
    if (Date.now() > until) throw new Error(`the gateway's MCP server "peer" is not ready: ${JSON.stringify(peer)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function mcp({ quick, log }) {
  const rounds = quick ? 2 : 7;
  const duration = quick ? 2 : 5;
  const connections = 50;
  const runs = quick ? 50 : 300;
  const sourceRounds = quick ? 2 : 5;
  let sdk;
  let gateway;
  try {
    // The SDK's server is both the (a) baseline and the (b) MCP server behind the gateway.
    sdk = await startServer(['bench/servers/mcp.mjs']);
    gateway = await startServer(['bench/servers/gateway.mjs'], { env: { BENCH_MCP_URL: `${sdk.url}/mcp` } });
    await peerReady(gateway.url);

    // (a) throughput
    const urlOf = (t) => (t.key === 'sdk' ? sdk.url : gateway.url) + t.path;
    for (const t of TARGETS) await checkAnswer(t, urlOf(t));
    const spec = (t) => ({ url: urlOf(t), body: t.body, headers: t.headers, connections, duration });
    await warmUp(TARGETS, spec, quick ? 1 : 5);
    // The rounds of lib/rounds.mjs, plus the measured server's CPU per call: req/s moves with whatever else
    // the machine runs (a full run once saw every target here drop ~40% from round 4 on), CPU per call much less.
    const pidOf = (t) => (t.key === 'sdk' ? sdk.pid : gateway.pid);
    const results = Object.fromEntries(TARGETS.map((t) => [t.key, []]));
    for (let r = 0; r < rounds; r++) {
      for (const t of TARGETS) {
        const cpuBefore = cpuMicros(pidOf(t));
        const res = await runLoad('bench/load/autocannon.mjs', spec(t));
        if (res.errors || res.non2xx)
          throw new Error(`${t.label}: ${res.errors} errors, ${res.non2xx} non-2xx responses`);
        res.serverUs = (cpuMicros(pidOf(t)) - cpuBefore) / res.requests;
        results[t.key].push(res);
        log(
          `  mcp round ${r + 1}/${rounds} ${t.key}: ${fmt.int(res.rps)} req/s, p99 ${res.p99} ms, server CPU per call ${res.serverUs.toFixed(0)} µs`,
        );
      }
    }
    const rps = (k) => rpsOf(results, k);
    const cpuUs = (k) => results[k].map((x) => x.serverUs);
    const vsRest = pairedRatio(rps('mcp'), rps('rest'));
    const vsSdk = pairedRatio(rps('mcp'), rps('sdk'));
    const cpuVsSdk = pairedRatio(cpuUs('sdk'), cpuUs('mcp'));

    // (b) latency added to an MCP-sourced tool
    const viaGateway = (n) =>
      runLoad('bench/load/mcp.mjs', { mode: 'gateway', url: gateway.url, tool: 'peer_echo', runs: n });
    const direct = (n) =>
      runLoad('bench/load/mcp.mjs', { mode: 'direct', url: `${sdk.url}/mcp`, remote: 'echo', runs: n });
    const check = (r, what) => {
      if (r.errors) throw new Error(`${what}: ${r.errors} errors, first: ${r.firstError}`);
      return r;
    };
    check(await viaGateway(quick ? 20 : 100), 'warm-up via gateway');
    check(await direct(quick ? 20 : 100), 'warm-up direct');
    const source = { gateway: [], direct: [] };
    for (let r = 0; r < sourceRounds; r++) {
      source.gateway.push(...check(await viaGateway(runs), 'MCP echo via gateway').ms);
      source.direct.push(...check(await direct(runs), 'MCP echo direct').ms);
      log(
        `  mcp source round ${r + 1}/${sourceRounds}: p50 gateway ${fmt.ms(median(source.gateway))} / direct ${fmt.ms(median(source.direct))}`,
      );
    }
    const addedP50 = median(source.gateway) - median(source.direct);

    return {
      id: 8,
      title: 'MCP',
      what:
        `(a) The gateway as an MCP server: \`${MCP_BODY}\` (header \`Accept: application/json, text/event-stream\`, as MCP clients ` +
        `send; no progressToken, so the answer is JSON) to the gateway's \`POST /mcp\`, vs the same echo through \`POST /tool/call\` on the ` +
        `same gateway, vs the MCP SDK's own Streamable HTTP server in stateless JSON mode (scenario 1's baseline, a fresh McpServer and ` +
        `transport per request, its documented pattern). ${connections} connections, ${duration} s per run, ${rounds} interleaved rounds ` +
        `after a warm-up run each; answers are checked before loading. (b) An MCP server as a tool source: that SDK server is configured ` +
        `as \`mcp.servers.peer\` (Streamable HTTP); its \`echo\` is called as \`peer_echo\` through the gateway's \`POST /tool/call\`, vs the ` +
        `same server called directly with the SDK's own \`Client\` (\`StreamableHTTPClientTransport\`, \`callTool\`): ${runs} calls one after ` +
        `another per round, ${sourceRounds} interleaved rounds after a warm-up, percentiles over all calls; every answer's text is checked. ` +
        `"Server CPU per call" is the measured server process's CPU time (user + system, from /proc) over the run ÷ its requests: ` +
        `req/s follows whatever else the machine runs during a round, CPU per call much less, so it shows where a req/s ratio comes from. ` +
        `The gateway here also has the SDK server configured as an MCP source (for (b)); that costs nothing per \`POST /tool/call\` or ` +
        `\`POST /mcp\` call (the source is only reached when one of its tools is called; measured the same CPU per echo call with and without it).`,
      columns: ['Measure', 'req/s (median)', 'p50', 'p99', '× `POST /tool/call`', 'server CPU per call (median)'],
      rows: [
        ...TARGETS.map((t) => [
          ...rateRow({ ...t, label: `(a) ${t.label}` }, results, 'rest'),
          `${median(cpuUs(t.key)).toFixed(0)} µs`,
        ]),
        [
          '(b) MCP `echo` through the gateway (`peer_echo`, one call at a time)',
          '',
          fmt.ms(median(source.gateway)),
          fmt.ms(pct(source.gateway, 99)),
          '',
          '',
        ],
        [
          '(b) the same server with the SDK `Client` directly',
          '',
          fmt.ms(median(source.direct)),
          fmt.ms(pct(source.direct, 99)),
          '',
          '',
        ],
        [
          '(b) added by the gateway',
          '',
          fmt.ms(addedP50),
          fmt.ms(pct(source.gateway, 99) - pct(source.direct, 99)),
          '',
          '',
        ],
      ],
      targets: [
        {
          text: '(a) `/mcp` `tools/call` ≥ 0.7× `POST /tool/call` req/s',
          value: fmt.ratio(vsRest),
          met: vsRest >= 0.7,
        },
        {
          text: '(a) `/mcp` `tools/call` ≥ 10× the MCP SDK’s stateless server req/s',
          value: fmt.ratio(vsSdk),
          met: vsSdk >= 10,
        },
        { text: '(a) server CPU per call: the MCP SDK’s ÷ `/mcp`’s (reported)', value: fmt.ratio(cpuVsSdk), met: null },
        { text: '(b) MCP-sourced tool: ≤ 1 ms added at p50', value: fmt.ms(addedP50), met: addedP50 <= 1 },
      ],
      notes: [
        'Issue 54 asked what the reshaping cost (a) (9.45x the SDK in the 7 Dec full run; an interleaved CPU A/B had ' +
          'read +4 % per `/mcp` call against ea1398e). Looked at on 7-8 Dec 2026 on the shared VM (load 7-14 on its 2 ' +
          'cores), ea1398e against d77cadd, both built alike: bench/cpu-ab.mjs on `/mcp` read d77cadd at 1.09x, 1.12x ' +
          "and 1.06x ea1398e's CPU per call in three runs of 3-8 rounds (the last two under --cpu-prof) and 0.84x in a " +
          "fourth at ~400 req/s: the rounds' spread. Profiles of the same number of calls each (bench/profile-ab.mjs, " +
          '150,000 calls, rounds interleaved): 88.4 µs busy per call against 89.7 µs, the same functions within ±0.5 µs ' +
          'but for what the reshaping added on the path: the turn-end immediate that lets a settled call drop its ' +
          "data's JSON (engine/settled-turn.ts, ~0.2 µs) and the engine's settled bookkeeping (+0.2 µs). The engine's " +
          'part alone, in one process (start, settle, take the JSON for the reply; no HTTP), three paired runs: 2.0-2.6 ' +
          'µs per echo call on both, 2.6-3.2 µs when the client also accepts SSE (a watcher on the call and its events ' +
          "kept: 0.3-1 µs more, as before the reshaping). So the reshaping cost (a) about 1 %, inside the rounds' spread. " +
          "Of the profiled busy time, the gateway's own code (the route, the request-context middleware, the engine) is " +
          "~30 %; the rest is Node's HTTP parsing, the response's writev (~17 % alone) and garbage collection.",
      ],
      commands: [
        shownCommand('server', ['bench/servers/mcp.mjs']),
        `BENCH_MCP_URL=<sdk server>/mcp ${shownCommand('server', ['bench/servers/gateway.mjs'])}`,
        shownCommand('load', [
          'bench/load/autocannon.mjs',
          JSON.stringify({ url: '<server>/mcp', body: '<body>', headers: MCP_HEADERS, connections, duration }),
        ]),
        shownCommand('load', [
          'bench/load/mcp.mjs',
          JSON.stringify({ mode: 'gateway', url: '<gateway>', tool: 'peer_echo', runs }),
        ]),
        shownCommand('load', [
          'bench/load/mcp.mjs',
          JSON.stringify({ mode: 'direct', url: '<sdk server>/mcp', remote: 'echo', runs }),
        ]),
      ],
      raw: { throughput: results, source },
    };
  } finally {
    await gateway?.stop();
    await sdk?.stop();
  }
}
