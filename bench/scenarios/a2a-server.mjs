/**
 * Scenario 7 — the gateway as an A2A agent: a blocking A2A 1.0 `SendMessage`
 * of echo to the gateway's own JSON-RPC endpoint (POST /a2a), vs the same
 * echo through `POST /tool/call`, vs the SDK's own Express server with an
 * equivalent executor. autocannon with 50 connections; rounds interleaved.
 */
import { shownCommand, startServer } from '../lib/proc.mjs';
import { interleavedRounds, warmUp, postJson, rateRow, rpsOf } from '../lib/rounds.mjs';
import { fmt, pairedRatio } from '../lib/stats.mjs';

const ECHO_BODY = JSON.stringify({ type: 'tool/call/req', tool_name: 'echo', arguments: { text: 'hi' } });
const SEND_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'SendMessage',
  params: {
    message: {
      messageId: 'bench',
      role: 'ROLE_USER',
      parts: [{ data: { text: 'hi' } }],
      metadata: { skillId: 'echo' },
    },
  },
});
const A2A = { 'a2a-version': '1.0' };

const TARGETS = [
  {
    key: 'a2a',
    label: 'a2e-gateway `POST /a2a` `SendMessage` (blocking, echo)',
    script: 'bench/servers/gateway.mjs',
    path: '/a2a',
    body: SEND_BODY,
    headers: A2A,
  },
  {
    key: 'rest',
    label: 'a2e-gateway `POST /tool/call` (echo)',
    script: 'bench/servers/gateway.mjs',
    path: '/tool/call',
    body: ECHO_BODY,
  },
  {
    key: 'sdk',
    label: '@a2a-js/sdk Express server, echo executor (`SendMessage`)',
    script: 'bench/servers/a2a-sdk-echo.mjs',
    path: '/a2a',
    body: SEND_BODY,
    headers: A2A,
  },
];

async function checkAnswer(t, url) {
  const { status, json } = await postJson(url, t.body, t.headers);
  const text =
    t.key === 'rest'
      ? json.data?.data?.text
      : json.result?.task?.artifacts?.[0]?.parts?.find((p) => p.data !== undefined)?.data?.text;
  const state = t.key === 'rest' ? 'TASK_STATE_COMPLETED' : json.result?.task?.status?.state;
  if (status !== 200 || text !== 'hi' || state !== 'TASK_STATE_COMPLETED')
    throw new Error(`${t.label} answered ${status} ${JSON.stringify(json)}`);
}

export async function a2aServer({ quick, log }) {
  const rounds = quick ? 2 : 7;
  const duration = quick ? 2 : 5;
  const connections = 50;
  const servers = {};
  try {
    // One gateway serves both of its doors.
    const gateway = await startServer(['bench/servers/gateway.mjs']);
    servers.gateway = gateway;
    servers.sdk = await startServer(['bench/servers/a2a-sdk-echo.mjs']);
    const urlOf = (t) => (t.key === 'sdk' ? servers.sdk.url : gateway.url) + t.path;
    for (const t of TARGETS) await checkAnswer(t, urlOf(t));
    const spec = (t) => ({ url: urlOf(t), body: t.body, headers: t.headers, connections, duration });
    await warmUp(TARGETS, spec, quick ? 1 : 5);
    const results = await interleavedRounds(TARGETS, spec, { rounds, name: 'a2a-server', log });
    const rps = (k) => rpsOf(results, k);
    const vsRest = pairedRatio(rps('a2a'), rps('rest'));
    const vsSdk = pairedRatio(rps('a2a'), rps('sdk'));
    return {
      id: 7,
      title: 'The gateway as an A2A agent',
      what:
        `A blocking A2A 1.0 \`SendMessage\` of echo (\`${SEND_BODY}\`, header \`A2A-Version: 1.0\`) to the gateway's JSON-RPC endpoint, ` +
        `vs the same echo through \`POST /tool/call\` on the same gateway, vs the SDK's own Express server answering the same request ` +
        `with an equivalent executor (a \`result\` artifact with a data part and a text part, then \`completed\`). ${connections} connections, ` +
        `${duration} s per run, ${rounds} interleaved rounds after a warm-up run each; answers are checked before loading.`,
      columns: ['Server', 'req/s (median)', 'p50 (median)', 'p99 (median)', '× `POST /tool/call`'],
      rows: TARGETS.map((t) => rateRow(t, results, 'rest')),
      targets: [
        { text: 'A2A `SendMessage` ≥ 0.5× `POST /tool/call` req/s', value: fmt.ratio(vsRest), met: vsRest >= 0.5 },
        { text: 'A2A `SendMessage` vs the SDK’s Express server', value: fmt.ratio(vsSdk), met: null },
      ],
      commands: [
        shownCommand('server', ['bench/servers/gateway.mjs']),
        shownCommand('server', ['bench/servers/a2a-sdk-echo.mjs']),
        shownCommand('load', [
          'bench/load/autocannon.mjs',
          JSON.stringify({ url: '<server>/a2a', body: '<body>', headers: A2A, connections, duration }),
        ]),
      ],
      raw: results,
    };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}
