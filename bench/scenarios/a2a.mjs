/**
 * Scenario 4 — A2A: a local @a2a-js/sdk peer behind the gateway.
 *  (a) a skill that completes at once: through the gateway vs the SDK's own client straight to the peer
 *  (b) a skill that finishes after 300 ms: end-to-end through the gateway
 *  (c) many concurrent calls through the gateway: errors, and TCP connections the peer accepted
 */
import { runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { fmt, median } from '../lib/stats.mjs';

const pct = (values, p) => {
  const v = [...values].sort((a, b) => a - b);
  return v.length ? v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))] : NaN;
};

export async function a2a({ quick, log }) {
  const runs = quick ? 20 : 100;
  const rounds = quick ? 2 : 5;
  const slowRuns = quick ? 4 : 10;
  const concurrent = quick ? 100 : 500;
  const peer = await startServer(['bench/servers/a2a-peer.mjs']);
  let gw;
  try {
    gw = await startServer(['bench/servers/gateway.mjs'], { env: { BENCH_AGENT_CARD: peer.url } });
    const viaGateway = (tool, n) => runLoad('bench/load/a2a.mjs', { mode: 'gateway', url: gw.url, tool, runs: n });
    const direct = (skill, n) => runLoad('bench/load/a2a.mjs', { mode: 'direct', url: peer.url, skill, runs: n });
    const check = (r, what) => {
      if (r.errors) throw new Error(`${what}: ${r.errors} errors, first: ${r.firstError}`);
      return r;
    };
    await viaGateway('Bench_Peer_instant', 20); // warm-up
    await direct('instant', 20);
    const inst = { gateway: [], direct: [] };
    const slow = { gateway: [], direct: [] };
    for (let r = 0; r < rounds; r++) {
      inst.gateway.push(...check(await viaGateway('Bench_Peer_instant', runs), 'instant via gateway').ms);
      inst.direct.push(...check(await direct('instant', runs), 'instant direct').ms);
      slow.gateway.push(...check(await viaGateway('Bench_Peer_slow', slowRuns), 'slow via gateway').ms);
      slow.direct.push(...check(await direct('slow', slowRuns), 'slow direct').ms);
      log(
        `  a2a round ${r + 1}/${rounds}: instant p50 gateway ${fmt.ms(median(inst.gateway))} / direct ${fmt.ms(median(inst.direct))}; 300 ms skill p50 ${fmt.ms(median(slow.gateway))}`,
      );
    }
    const connsBefore = (await peer.ask({ cmd: 'connections' })).connections;
    const conc = await runLoad('bench/load/a2a.mjs', {
      mode: 'concurrent',
      url: gw.url,
      tool: 'Bench_Peer_instant',
      runs: concurrent,
    });
    const connsAfter = (await peer.ask({ cmd: 'connections' })).connections;
    const opened = connsAfter - connsBefore;
    log(`  a2a: ${concurrent} concurrent calls, ${conc.errors} errors, ${opened} new TCP connections to the peer`);

    const addedP50 = median(inst.gateway) - median(inst.direct);
    const addedP99 = pct(inst.gateway, 99) - pct(inst.direct, 99);
    const slowP50 = median(slow.gateway);
    return {
      id: 4,
      title: 'A2A',
      what:
        `A local peer built with @a2a-js/sdk (its Express server, JSON-RPC, A2A 1.0, streaming offered), registered as an agent of the ` +
        `gateway. (a) skill \`instant\` (an artifact and \`completed\` at once): ${runs} calls one after another per round through ` +
        `\`POST /tool/call\`, vs the SDK's own client (\`ClientFactory\`, blocking \`sendMessage\`) straight to the peer; (b) skill \`slow\` ` +
        `(\`working\`, then done after 300 ms): ${slowRuns} calls per round; ${rounds} interleaved rounds, percentiles over all calls. ` +
        `(c) ${concurrent} calls of \`instant\` through the gateway at once; the peer counts the TCP connections it accepts meanwhile.`,
      columns: ['Measure', 'through the gateway', 'SDK client direct', 'added by the gateway'],
      rows: [
        ['(a) instant skill, p50', fmt.ms(median(inst.gateway)), fmt.ms(median(inst.direct)), fmt.ms(addedP50)],
        ['(a) instant skill, p99', fmt.ms(pct(inst.gateway, 99)), fmt.ms(pct(inst.direct, 99)), fmt.ms(addedP99)],
        [
          '(b) 300 ms skill, p50 end-to-end',
          fmt.ms(slowP50),
          fmt.ms(median(slow.direct)),
          fmt.ms(slowP50 - median(slow.direct)),
        ],
        ['(b) 300 ms skill, p99 end-to-end', fmt.ms(pct(slow.gateway, 99)), fmt.ms(pct(slow.direct, 99)), ''],
        [
          `(c) ${concurrent} concurrent calls: errors / wall time`,
          `${conc.errors} / ${fmt.ms(conc.seconds * 1000)}`,
          '',
          '',
        ],
        [`(c) TCP connections the peer accepted for them`, fmt.int(opened), '', ''],
      ],
      targets: [
        { text: '(a) ≤ 2 ms added at p50', value: fmt.ms(addedP50), met: addedP50 <= 2 },
        { text: '(b) 300 ms skill end-to-end ≤ 350 ms at p50', value: fmt.ms(slowP50), met: slowP50 <= 350 },
        {
          text: `(c) ${concurrent} concurrent calls, no errors, connections reused`,
          value: `${conc.errors} errors, ${opened} connections for ${concurrent} calls`,
          met: conc.errors === 0 && opened < concurrent,
        },
      ],
      commands: [
        shownCommand('server', ['bench/servers/a2a-peer.mjs']),
        `BENCH_AGENT_CARD=<peer> ${shownCommand('server', ['bench/servers/gateway.mjs'])}`,
        shownCommand('load', [
          'bench/load/a2a.mjs',
          JSON.stringify({ mode: 'gateway', url: '<gateway>', tool: 'Bench_Peer_instant', runs }),
        ]),
        shownCommand('load', [
          'bench/load/a2a.mjs',
          JSON.stringify({ mode: 'direct', url: '<peer>', skill: 'instant', runs }),
        ]),
        shownCommand('load', [
          'bench/load/a2a.mjs',
          JSON.stringify({ mode: 'concurrent', url: '<gateway>', tool: 'Bench_Peer_instant', runs: concurrent }),
        ]),
      ],
      raw: { inst, slow, conc, opened },
    };
  } finally {
    await gw?.stop();
    await peer.stop();
  }
}
