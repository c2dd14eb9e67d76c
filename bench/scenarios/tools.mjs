/**
 * Scenario 10 — the real native tools in the default configuration (info logs
 * to a file), each against a bare Hono route doing the same operation with no
 * checks: read_file of a 12-byte file vs readFile, list_dir of a 100-entry
 * directory vs readdir(withFileTypes) (and, reported, list_dir with sizes vs
 * readdir + an lstat per file), http_request GET of a local server vs
 * undici.request. Interleaved rounds, 50 connections; eval_js of `1+1` is
 * reported against raw QuickJS in one worker (calls one after another).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad, shownCommand, startServer } from '../lib/proc.mjs';
import { fmt, median, pairedRatio } from '../lib/stats.mjs';

const call = (tool, args) => JSON.stringify({ type: 'tool/call/req', tool_name: tool, arguments: args });

/**
 * The compared operations: the gateway's tool call and the Hono route doing the same. `target`: the ratio the
 * issue asks for (null: reported only).
 */
function operations(targetUrl) {
  return [
    { key: 'read', label: '`read_file` of a 12-byte file', baseline: '`readFile`', tool: 'read_file', args: { path: 'small.txt' }, route: '/read', target: 0.7 },
    {
      key: 'list',
      label: '`list_dir` of a 100-entry directory',
      baseline: '`readdir(withFileTypes)`',
      tool: 'list_dir',
      args: { path: 'dir100' },
      route: '/list',
      target: 0.7,
    },
    {
      // Sizes are opt-in: the same work as a bare route is then readdir + an lstat per file.
      key: 'listSizes',
      label: '`list_dir` of a 100-entry directory with `sizes: true`',
      baseline: '`readdir` + `lstat` of each file',
      tool: 'list_dir',
      args: { path: 'dir100', sizes: true },
      route: '/list-sizes',
      target: null,
    },
    { key: 'http', label: '`http_request` GET of a local server', baseline: '`undici.request`', tool: 'http_request', args: { url: `${targetUrl}/` }, route: '/fetch', target: 0.7 },
  ];
}

async function check(url, body, what) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const json = await res.json();
  if (res.status !== 200 || json.data?.success !== true) throw new Error(`${what} answered ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
  return json.data.data;
}

export async function tools({ quick, log }) {
  const rounds = quick ? 1 : 7;
  const duration = quick ? 1 : 5;
  const evalRuns = quick ? 20 : 300;
  const connections = 50;
  const dir = mkdtempSync(join(tmpdir(), 'a2e-bench-tools-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(join(workspace, 'dir100'), { recursive: true });
  writeFileSync(join(workspace, 'small.txt'), 'hello world\n');
  for (let i = 0; i < 100; i++) writeFileSync(join(workspace, 'dir100', `file-${String(i).padStart(3, '0')}.txt`), `${i}\n`);
  const servers = {};
  try {
    servers.target = await startServer(['bench/servers/http-target.mjs']);
    const targetHost = new URL(servers.target.url).host;
    servers.gateway = await startServer(['bench/servers/gateway.mjs'], {
      env: { BENCH_LOG_LEVEL: 'info', BENCH_WORKSPACE: workspace, BENCH_HTTP_ALLOW: targetHost },
      stderrFile: join(dir, 'gateway.log'),
    });
    servers.hono = await startServer(['bench/servers/hono-tools.mjs'], { env: { BENCH_WORKSPACE: workspace } });
    const ops = operations(servers.target.url);
    const specs = {};
    for (const op of ops) {
      const body = call(op.tool, op.args);
      const got = await check(`${servers.gateway.url}/tool/call`, body, op.tool);
      const bare = await check(`${servers.hono.url}${op.route}`, body, `Hono ${op.route}`);
      if (op.key === 'read' && got.content !== 'hello world\n') throw new Error(`read_file read ${JSON.stringify(got)}`);
      if (op.key.startsWith('list')) {
        // Both sides answer the same entries: paths, types and (with sizes) each file's size (list_dir sorts them, readdir does not).
        if (got.entries?.length !== 100) throw new Error(`list_dir listed ${got.entries?.length} entries`);
        const sorted = (entries) => JSON.stringify(entries.map((e) => JSON.stringify(e)).sort());
        if (sorted(got.entries) !== sorted(bare.entries)) throw new Error(`list_dir and Hono ${op.route} answer different entries`);
      }
      specs[op.key] = {
        gateway: { url: `${servers.gateway.url}/tool/call`, body, connections, duration },
        hono: { url: `${servers.hono.url}${op.route}`, body, connections, duration },
      };
    }
    // Warm-up, then interleaved rounds: every operation on both servers in each round.
    for (const op of ops) for (const side of Object.keys(specs[op.key])) await runLoad('bench/load/autocannon.mjs', { ...specs[op.key][side], duration: 1 });
    const results = Object.fromEntries(ops.map((op) => [op.key, Object.fromEntries(Object.keys(specs[op.key]).map((side) => [side, []]))]));
    for (let r = 0; r < rounds; r++) {
      for (const op of ops) {
        for (const side of Object.keys(specs[op.key])) {
          const res = await runLoad('bench/load/autocannon.mjs', specs[op.key][side]);
          if (res.errors || res.non2xx) throw new Error(`${op.tool} (${side}): ${res.errors} errors, ${res.non2xx} non-2xx responses`);
          results[op.key][side].push(res);
          log(`  tools round ${r + 1}/${rounds} ${op.key} ${side}: ${fmt.int(res.rps)} req/s, p99 ${res.p99} ms`);
        }
      }
    }
    // eval_js: one call at a time through the gateway, and QuickJS evaluating the same code in one worker on the server's CPU.
    const evalSpec = { url: servers.gateway.url, tool: 'eval_js', arguments: { code: '1+1' }, runs: evalRuns };
    await runLoad('bench/load/calls.mjs', { ...evalSpec, runs: Math.min(20, evalRuns) });
    const viaGateway = (await runLoad('bench/load/calls.mjs', evalSpec)).ms;
    const direct = await runLoad('bench/load/quickjs-direct.mjs', { code: '1+1', runs: evalRuns }, { cpu: 'server' });
    const perSecond = (ms) => 1000 / (ms.reduce((a, b) => a + b, 0) / ms.length);

    const rps = (key, side) => results[key][side].map((x) => x.rps);
    const ratios = Object.fromEntries(ops.map((op) => [op.key, pairedRatio(rps(op.key, 'gateway'), rps(op.key, 'hono'))]));
    const rows = [];
    for (const op of ops) {
      for (const side of Object.keys(specs[op.key])) {
        const res = results[op.key][side];
        const label = side === 'gateway' ? `a2e-gateway ${op.label}` : `bare Hono route, ${op.baseline}`;
        const ratio = side === 'gateway' ? ratios[op.key] : 1;
        rows.push([label, fmt.int(median(rps(op.key, side))), fmt.latency(median(res.map((x) => x.p50))), fmt.latency(median(res.map((x) => x.p99))), fmt.ratio(ratio)]);
      }
    }
    rows.push(
      ['a2e-gateway `eval_js` of `1+1`, one call at a time', fmt.int(perSecond(viaGateway)), fmt.ms(median(viaGateway)), '', ''],
      ['raw QuickJS in one worker (fresh runtime and context each), round trip', fmt.int(perSecond(direct.ms)), fmt.ms(median(direct.ms)), '', ''],
    );
    return {
      id: 10,
      title: 'Native tools, default configuration',
      what:
        `The native tools as users call them, in the default configuration (info logs to a file): ${ops.map((o) => o.label).join('; ')}, ` +
        `each against a bare Hono route doing the same operation with no checks and answering the same tool/call/resp JSON. ` +
        `list_dir answers names and types; with \`sizes: true\` also each file's size, the same work as a bare route doing readdir + an lstat per file (reported). ` +
        `${connections} connections, ${duration} s per run, ${rounds} interleaved rounds after a warm-up; answers checked before loading. ` +
        `The local server http_request fetches is allowed with \`tools.http.allow_hosts: ["127.0.0.1:<port>"]\` (still checked at connect time). ` +
        `eval_js: ${evalRuns} calls of \`1+1\` one after another, vs the same QuickJS build evaluating it in one worker thread.`,
      columns: ['Path', 'req/s (median)', 'p50 (median)', 'p99 (median)', '× bare Hono'],
      rows,
      notes: [
        'Where list_dir\'s time goes (issue 15; CPU time of the processes per call, and `node --cpu-prof`, 1 Dec 2026): the ' +
          'listing is made off the event loop in one trip to a helper thread (open the directory with O_DIRECTORY|O_NOFOLLOW ' +
          'from the workspace root\'s descriptor, readdir through /proc/self/fd), never by path as the bare route does. On this ' +
          'machine a MessagePort round trip to that thread costs ~80 µs of CPU (a threadpool round trip ~50 µs), a readdir of ' +
          '100 entries ~70 µs, and the answer\'s JSON ~33 µs, on the one CPU every server thread is pinned to. ' +
          `${process.getuid?.() === 0 ? 'This run was as root: ' : 'Run as root, '}the file tools also run in the privilege-separated worker process (the workspace owner's uid): its JSON ` +
          'message and answer cost ~40 % more per call again (measured: gateway ~330 µs + worker ~300 µs per listing, vs ~530 µs ' +
          'in the gateway alone and ~340 µs for the bare route). Since 2 Dec 2026 that worker, whose event loop serves nothing ' +
          'else, makes the system calls on its own thread instead of a helper thread\'s (sync-threads.ts `answerOnThisThread`): ' +
          'its CPU per listing went from 340-400 µs to 270-280 µs and per small read_file from 205-230 µs to 125-130 µs. What a ' +
          'turn sends each way now goes as one IPC message (fs/ipc-batch.ts: a burst of calls wakes the other process once), and ' +
          'the worker\'s answer arrives as the JSON text of its data, which the gateway answers with as it is (engine/json-text.ts, ' +
          'parsed only if something reads it): per listing, gateway 345-390 → 275-290 µs and worker ~250 µs; per small read_file ' +
          'gateway 225-235 → 170-200 µs and worker ~80 µs, against 310-340 µs and 280-330 µs for the bare routes that hour. What ' +
          'is left for a listing is the second process: its readdir through /proc/self/fd, the JSON of 100 entries and the IPC. ' +
          'Since 3 Dec 2026 the listing\'s JSON is written as text from the names (fs/listing-json.ts), and the worker\'s answers ' +
          'come back framed on a pipe of their own, the JSON text as its own line (fs/answer-stream.ts), not escaped into an IPC ' +
          'message and unescaped again (~25 µs per listing): measured by process CPU time over 4-s loads that day, gateway ' +
          '105-125 µs + worker 120-130 µs per listing against 180-200 µs for the bare route (0.75-0.8× by CPU), of which the ' +
          'readdir itself is ~58 µs by path and ~67 µs through the directory\'s descriptor (open with O_NOFOLLOW, readdir of ' +
          '/proc/self/fd/<fd>, close). The gateway\'s own part is now below the bare route\'s HTTP and JSON work; the rest is ' +
          'the second process (its wake-ups, its share of the one CPU), the price of the privilege separation, kept as strong. ' +
          'Since 4 Dec 2026 the answer\'s JSON text stays UTF-8 bytes from the worker\'s pipe to the socket (engine/json-text.ts; ' +
          'before, the gateway decoded the line, built the response as a string and had it flattened twice, by the Content-Length ' +
          'count and by Node joining it to the headers: a third of what the gateway allocated per listing, by a sampling heap ' +
          'profile): scavenges per listing fell by a third (trace-gc, same load). Measured that day by process CPU time over 5-s ' +
          'loads: gateway 60-75 µs + worker 77-88 µs per listing, against 101-108 µs for the bare route (readdir on the threadpool). ' +
          'What the gateway still spends most on under this load is garbage collection (~a quarter of its CPU by `--cpu-prof`): the ' +
          '50 calls in flight wait on the worker, so their young objects (heap snapshots under load: ~10 KB a call, five suspended ' +
          'async functions, seven promises and ~20 closures each) are alive at each scavenge and copied. ' +
          'On the evening of 4 Dec 2026 this VM ran on a slower host (bare Hono\'s echo ~20,000 req/s in scenario 1, ~46,000 ' +
          'that morning) and list_dir measured 0.57-0.58× in two runs of this scenario: by process CPU time over 5-s loads, ' +
          'gateway 98-140 µs + worker 98-115 µs per listing against 123-141 µs for the bare route. The wake-ups were shared ' +
          '(counted: ~7 calls per write to the worker, ~16 answers per write back); by `--cpu-prof` of the worker, its readdir ' +
          'through the descriptor is ~36 % of its CPU, then the listing\'s JSON and its GC. (In the gateway\'s profile the IPC ' +
          'write, `writeUtf8String` under `child.send`, shows ~6 %: the profiler samples wall time, and the worker woken by that ' +
          'write runs on the same CPU while the gateway is still in it.) On this host the second process\'s ~100 µs per listing ' +
          'is the gap: the gateway\'s own part alone is about the bare route\'s whole request. ' +
          'Sizes are opt-in since this issue: with them, an lstat per file through the directory\'s descriptor, several times the ' +
          'listing itself.',
        '',
        'Where eval_js\'s time goes (issue 15, measured on 1 Dec 2026 on the server\'s CPU): every evaluation gets a fresh ' +
          'WebAssembly instance of the compiled QuickJS module (its own 16 MiB memory, QuickJS started in it), so nothing one ' +
          'evaluation leaves behind is seen by the next; making one took ~13 ms of CPU here, against ~0.6 ms for a new runtime, ' +
          'context and evaluation in an instance already made, which is what the raw row does. The gateway makes the next ' +
          'instance after each evaluation, in the parked worker, so a call rarely waits for it; one after another, calls/s is ' +
          'bounded by that preparation on the one CPU.',
      ],
      targets: [
        ...ops.map((op) =>
          op.target === null
            ? { text: `${op.label} vs a Hono route doing ${op.baseline} (reported)`, value: fmt.ratio(ratios[op.key]), met: null }
            : { text: `${op.label} ≥ ${op.target}× a Hono route doing ${op.baseline}`, value: fmt.ratio(ratios[op.key]), met: ratios[op.key] >= op.target },
        ),
        {
          text: '`eval_js` of `1+1`: calls/s and p50, gateway vs raw QuickJS in one worker (reported)',
          value: `${fmt.int(perSecond(viaGateway))}/s, p50 ${fmt.ms(median(viaGateway))} vs ${fmt.int(perSecond(direct.ms))}/s, p50 ${fmt.ms(median(direct.ms))} (evaluation alone ${fmt.ms(median(direct.inWorker))})`,
          met: null,
        },
      ],
      commands: [
        shownCommand('server', ['bench/servers/http-target.mjs']),
        `BENCH_LOG_LEVEL=info BENCH_WORKSPACE=<tmp dir> BENCH_HTTP_ALLOW=<target host:port> ${shownCommand('server', ['bench/servers/gateway.mjs'])} 2> gateway.log`,
        `BENCH_WORKSPACE=<tmp dir> ${shownCommand('server', ['bench/servers/hono-tools.mjs'])}`,
        shownCommand('load', ['bench/load/autocannon.mjs', JSON.stringify({ url: '<server>/tool/call', body: '<call>', connections, duration })]),
        shownCommand('load', ['bench/load/calls.mjs', JSON.stringify({ ...evalSpec, url: '<gateway>' })]),
        shownCommand('server', ['bench/load/quickjs-direct.mjs', JSON.stringify({ code: '1+1', runs: evalRuns })]),
      ],
      raw: { results, eval: { viaGateway, direct } },
    };
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
