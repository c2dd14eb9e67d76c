/**
 * Scenario 5 — shell: `run_command ["true"]` through the gateway (HTTP,
 * validation, the shell tool, its bubblewrap sandbox) vs spawning the same
 * sandboxed command line directly from Node on the server's CPU, vs spawning
 * `true` bare (which gives the sandbox's own cost). One at a time, rounds
 * interleaved.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { fmt, median, pairedRatio } from '../lib/stats.mjs';

export async function shell({ quick, log }) {
  const runs = quick ? 10 : 50;
  const rounds = quick ? 2 : 5;
  const argv = ['true'];
  const workspace = await mkdtemp(join(tmpdir(), 'a2e-bench-'));
  let s;
  try {
    s = await startServer(['bench/servers/gateway.mjs'], { env: { BENCH_WORKSPACE: workspace } });
    const kinds = [
      {
        key: 'gateway',
        label: 'a2e-gateway `POST /tool/call` run_command',
        script: 'bench/load/shell-gateway.mjs',
        spec: { url: s.url, argv },
        cpu: 'load',
      },
      {
        key: 'direct',
        label: 'same sandboxed command spawned from Node',
        script: 'bench/load/shell-direct.mjs',
        spec: { workspace, argv, sandboxed: true },
        cpu: 'server',
      },
      {
        key: 'bare',
        label: '`true` spawned from Node, no sandbox',
        script: 'bench/load/shell-direct.mjs',
        spec: { workspace, argv, sandboxed: false },
        cpu: 'server',
      },
    ];
    for (const k of kinds) await runLoad(k.script, { ...k.spec, runs: 3 }, { cpu: k.cpu }); // warm-up
    const perRound = Object.fromEntries(kinds.map((k) => [k.key, []]));
    for (let r = 0; r < rounds; r++) {
      for (const k of kinds) {
        const res = await runLoad(k.script, { ...k.spec, runs }, { cpu: k.cpu });
        perRound[k.key].push(median(res.ms));
      }
      log(
        `  shell round ${r + 1}/${rounds}: gateway ${fmt.ms(perRound.gateway[r])}, sandboxed ${fmt.ms(perRound.direct[r])}, bare ${fmt.ms(perRound.bare[r])}`,
      );
    }
    const ratio = pairedRatio(perRound.gateway, perRound.direct);
    const sandboxCost = median(perRound.direct.map((d, i) => d - perRound.bare[i]));
    const added = median(perRound.gateway.map((g, i) => g - perRound.direct[i]));
    return {
      id: 5,
      title: 'Shell',
      what:
        `\`run_command\` with \`argv: ["true"]\`, ${runs} calls one after another per round, ${rounds} interleaved rounds: through the ` +
        'gateway (default `tools.shell` config: bubblewrap sandbox, no network, rlimits), vs the very command line the gateway builds ' +
        '(its own `sandboxCommand`, spawned the way the shell tool spawns) run directly from Node on the server’s CPU, vs `true` ' +
        'spawned bare. Figures are medians of the per-round median latency.',
      columns: ['Path', 'latency per command (median)', '× direct sandboxed'],
      rows: kinds.map((k) => [
        k.label,
        fmt.ms(median(perRound[k.key])),
        fmt.ratio(pairedRatio(perRound[k.key], perRound.direct)),
      ]),
      targets: [
        {
          text: 'gateway vs direct sandboxed spawn (reported; no target set)',
          value: `${fmt.ratio(ratio)} (+${fmt.ms(added)} per call)`,
          met: null,
        },
        { text: 'the sandbox’s own cost per command (reported)', value: fmt.ms(sandboxCost), met: null },
      ],
      commands: [
        `BENCH_WORKSPACE=<tmp dir> ${shownCommand('server', ['bench/servers/gateway.mjs'])}`,
        shownCommand('load', ['bench/load/shell-gateway.mjs', JSON.stringify({ url: '<server>', argv, runs })]),
        shownCommand('server', [
          'bench/load/shell-direct.mjs',
          JSON.stringify({ workspace: '<tmp dir>', argv, runs, sandboxed: true }),
        ]),
        shownCommand('server', [
          'bench/load/shell-direct.mjs',
          JSON.stringify({ workspace: '<tmp dir>', argv, runs, sandboxed: false }),
        ]),
      ],
      raw: perRound,
    };
  } finally {
    await s?.stop();
    await rm(workspace, { recursive: true, force: true });
  }
}
