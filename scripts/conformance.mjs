#!/usr/bin/env node
/**
 * `npm run conformance`: the official MCP conformance runner (@modelcontextprotocol/conformance, which needs
 * Node 22: both come from npm through npx, pinned) against the gateway.
 *   server suite: every server scenario against /mcp of a gateway (dist/cli.js) whose tools include the
 *                 fixtures the scenarios call by name (test/fixtures/conformance-server.mjs, an MCP source);
 *   client suite: the gateway as an MCP client of the runner's test servers (scripts/conformance-client.mjs).
 * Prints pass / fail / n/a per scenario, replaces the `## MCP (conformance runner)` section of CONFORMANCE.md
 * (the rest of the file is kept), and exits 1 when a scenario fails that is neither not applicable nor a
 * known fault of the suite (listed below with the reason).
 * The runner speaks only Streamable HTTP to a server: mcp-stdio is not run by it (the same door answers both).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SUITE = '@modelcontextprotocol/conformance@0.1.16';
const NODE = 'node@22.23.3';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const HEADING = '## MCP (conformance runner)';

/** Scenarios for capabilities the gateway does not offer: run, but reported as not applicable, never as passes. */
const NOT_APPLICABLE = [
  [/^(resources-|prompts-)/, 'the gateway serves tools only: no resources or prompts'],
  [/^completion-/, 'the gateway serves tools only: no completion (it goes with prompts and resource templates)'],
  [
    /sampling|elicitation/,
    'the gateway sends no requests to its client (no sampling or elicitation): its tools are single-turn',
  ],
  [/^auth\//, "the gateway's MCP client authenticates with configured headers (mcp.servers.<id>.headers), not OAuth"],
];
/** Client scenarios run: the others are not applicable (see NOT_APPLICABLE). */
const CLIENT_SCENARIOS = ['initialize', 'tools_call', 'sse-retry'];
/** Failures that are the suite's, not the gateway's: scenario → reason. Empty when none. */
const SUITE_FAULTS = {};

const notApplicable = (scenario) => NOT_APPLICABLE.find(([re]) => re.test(scenario))?.[1];

function run(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, out }));
  });
}

const runner = (args) =>
  run('npx', ['-y', '-p', NODE, '-p', SUITE, '--', 'conformance', ...args], {
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });

/** The checks of every scenario in a runner's output directory: scenario → checks. */
function resultsIn(dir, prefix) {
  const out = new Map();
  for (const entry of readdirSync(dir)) {
    const scenario = entry.slice(prefix.length).replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    const file = join(dir, entry, 'checks.json');
    out.set(scenario, existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : []);
  }
  return out;
}

/** One scenario's verdict from its checks. */
function verdict(scenario, checks) {
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const passed = checks.filter((c) => c.status === 'SUCCESS').length;
  const warnings = checks.filter((c) => c.status === 'WARNING');
  const na = notApplicable(scenario);
  if (na) return { status: 'n/a', note: na };
  if (failed.length > 0) {
    const why = failed.map((c) => `${c.id}: ${c.errorMessage ?? c.details?.message ?? 'failed'}`).join('; ');
    return SUITE_FAULTS[scenario]
      ? { status: 'suite fault', note: `${SUITE_FAULTS[scenario]} (${why})` }
      : { status: 'fail', note: why };
  }
  if (passed === 0 && warnings.length === 0) {
    // Only INFO checks: the suite itself found nothing to test (e.g. SSE polling against a server that answers JSON).
    const info = checks.map((c) => c.details?.message).filter(Boolean);
    return info.length > 0
      ? { status: 'n/a', note: `the suite says: ${info.join('; ')}` }
      : { status: 'fail', note: 'no check ran' };
  }
  return {
    status: 'pass',
    note:
      warnings.map((c) => `warning ${c.id}: ${c.errorMessage ?? c.details?.message ?? ''}`).join('; ') +
      (passed ? '' : ' (warnings only)'),
  };
}

async function startGateway(dir) {
  const fixture = join(root, 'test/fixtures/conformance-server.mjs');
  const source = (mode) =>
    `    ${mode}:\n      command: ${JSON.stringify(process.execPath)}\n      args: [${JSON.stringify(fixture)}, ${mode}]\n      sandbox: false\n`;
  writeFileSync(
    join(dir, 'gateway.yaml'),
    `server:\n  port: 0\nmcp:\n  start_wait_ms: 20000\n  servers:\n${source('test')}${source('json')}`,
  );
  const gateway = spawn(process.execPath, [join(root, 'dist/cli.js'), 'serve', '--config', join(dir, 'gateway.yaml')], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    gateway.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    gateway.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before listening`)));
  });
  return {
    url,
    stop: () =>
      new Promise((r) => (gateway.exitCode !== null ? r() : (gateway.once('exit', r), gateway.kill('SIGTERM')))),
  };
}

function section(rows, version) {
  const count = (suite, status) => rows.filter((r) => r.suite === suite && r.status === status).length;
  const summary = (suite) =>
    `${count(suite, 'pass')} pass, ${count(suite, 'fail')} fail, ${count(suite, 'suite fault')} suite fault, ${count(suite, 'n/a')} not applicable`;
  const lines = [
    HEADING,
    '',
    `Generated by \`npm run conformance\` (scripts/conformance.mjs) with \`${version}\`; do not edit by hand.`,
    'Server suite: every server scenario against `/mcp`; the tools the scenarios call by name come from',
    '`test/fixtures/conformance-server.mjs`, an MCP server the gateway re-serves. Client suite: the gateway as an',
    'MCP client (`scripts/conformance-client.mjs`). The runner reaches servers over Streamable HTTP only, so',
    '`mcp-stdio` (the same door) is not run by it. Not applicable: capabilities the gateway does not offer, run',
    'and listed, never counted as passes.',
    '',
    `- Server: ${summary('server')}`,
    `- Client: ${summary('client')}`,
    '',
    '| Suite | Scenario | Result | Note |',
    '|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.suite} | \`${r.scenario}\` | ${r.status} | ${r.note.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 300)} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

/** CONFORMANCE.md with our section replaced (or added); every other section kept as it was. */
export function withSection(existing, text) {
  if (!existing.trim()) return `# Conformance\n\n${text}`;
  const start = existing.indexOf(`${HEADING}\n`);
  if (start < 0) return `${existing.trimEnd()}\n\n${text}`;
  const next = existing.slice(start + HEADING.length).search(/\n## /);
  const end = next < 0 ? existing.length : start + HEADING.length + next + 1;
  return `${existing.slice(0, start)}${text}${end < existing.length ? `\n${existing.slice(end)}` : ''}`;
}

async function main() {
  if (!existsSync(join(root, 'dist/cli.js'))) throw new Error('dist/cli.js is missing: run npm run build first');
  const version = (await runner(['--version'])).out.trim().split('\n').pop();
  if (!/^\d+\.\d+\.\d+/.test(version))
    throw new Error(`could not run the conformance runner through npx (${SUITE}, ${NODE}): ${version}`);
  const dir = mkdtempSync(join(tmpdir(), 'a2e-conformance-'));
  const rows = [];
  try {
    const gateway = await startGateway(dir);
    try {
      const server = await runner([
        'server',
        '--url',
        `${gateway.url}/mcp`,
        '--suite',
        'all',
        '-o',
        join(dir, 'server'),
      ]);
      if (!existsSync(join(dir, 'server')))
        throw new Error(`the server suite did not run:\n${server.out.slice(-2000)}`);
    } finally {
      await gateway.stop();
    }
    for (const [scenario, checks] of resultsIn(join(dir, 'server'), 'server-'))
      rows.push({ suite: 'server', scenario, ...verdict(scenario, checks) });
    const listed = (await runner(['list', '--client'])).out;
    const clientScenarios = [...listed.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
    for (const scenario of clientScenarios.length ? clientScenarios : CLIENT_SCENARIOS) {
      if (!CLIENT_SCENARIOS.includes(scenario)) {
        rows.push({
          suite: 'client',
          scenario,
          status: 'n/a',
          note: notApplicable(scenario) ?? 'not run: see scripts/conformance.mjs',
        });
        continue;
      }
      await runner([
        'client',
        '--command',
        `${process.execPath} ${join(root, 'scripts/conformance-client.mjs')}`,
        '--scenario',
        scenario,
        '-o',
        join(dir, 'client'),
      ]);
      const checks = existsSync(join(dir, 'client')) ? (resultsIn(join(dir, 'client'), '').get(scenario) ?? []) : [];
      rows.push({ suite: 'client', scenario, ...verdict(scenario, checks) });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const r of rows)
    console.log(
      `${r.status.padEnd(11)} ${r.suite.padEnd(6)} ${r.scenario}${r.note ? `  — ${r.note.slice(0, 200)}` : ''}`,
    );
  const file = join(root, 'CONFORMANCE.md');
  writeFileSync(
    file,
    withSection(
      existsSync(file) ? readFileSync(file, 'utf8') : '',
      section(rows, `${SUITE.replace(/@[^@]*$/, '')} ${version}`),
    ),
  );
  const failed = rows.filter((r) => r.status === 'fail');
  console.log(
    `\n${rows.filter((r) => r.status === 'pass').length} pass, ${failed.length} fail, ${rows.filter((r) => r.status === 'n/a').length} n/a; CONFORMANCE.md written`,
  );
  if (failed.length > 0) process.exitCode = 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`conformance: ${err.message}`);
    process.exitCode = 1;
  });
}
