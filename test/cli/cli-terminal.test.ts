/**
 * The CLI on a real pseudo-terminal (util-linux `script`), as a newcomer sees
 * it: a failed command's stdout and stderr both reach the screen, a typo in an
 * option gets one readable line, and `serve --help` is about serve. The gateway
 * is the real one (`a2e-gateway serve`) on an ephemeral port with the real shell tool.
 */
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, startShellCli } from '../helpers/cli.js';

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Run the CLI on a pseudo-terminal; `output` is what the terminal shows (stdout and stderr together), CRLF folded. */
async function onTerminal(args: string[]): Promise<{ exitCode: number | undefined; output: string }> {
  const command = ['node', CLI, ...args].map(shellQuote).join(' ');
  const r = await execa('script', ['-qfec', command, '/dev/null'], {
    reject: false,
    env: { LOG_LEVEL: 'silent' },
    timeout: 60_000,
  });
  if (r.failed && r.exitCode === undefined) {
    throw new Error(`could not run util-linux "script" (install bsdutils / util-linux): ${r.message}`);
  }
  return { exitCode: r.exitCode, output: String(r.stdout).replace(/\r\n/g, '\n') };
}

let gateway: Awaited<ReturnType<typeof startShellCli>>;
beforeAll(async () => {
  gateway = await startShellCli('a2e-cli-terminal-');
});
afterAll(() => gateway?.stop());

describe('a2e-gateway on a terminal', () => {
  it('call of a failing command shows its stdout and stderr, then the error; exit 1', async () => {
    const argsJson = JSON.stringify({ argv: ['sh', '-c', 'echo out-line; echo err-line >&2; exit 3'] });
    const r = await onTerminal(['call', 'run_command', '--args-json', argsJson, '--url', gateway.url]);
    expect(r.exitCode).toBe(1);
    const lines = r.output.trim().split('\n');
    expect(lines).toContain('out-line');
    expect(lines).toContain('err-line');
    expect(lines.at(-1)).toMatch(/^a2e-gateway: tool failed: command "sh" exited with code 3/);
    expect(r.output).not.toMatch(/\n\s+at |\/tmp\//); // no stack trace, no host path
  });

  it('an unknown option: one line naming the command, a suggestion and the --help pointer; exit 2', async () => {
    const serve = await onTerminal(['serve', '--prot', '9000']);
    expect(serve.exitCode).toBe(2);
    expect(serve.output.trim()).toBe(
      'a2e-gateway: serve: unknown option --prot; did you mean --port? (run a2e-gateway serve --help for its options)',
    );
    const call = await onTerminal(['call', 'run_command', '--tokn', 'x']);
    expect(call.exitCode).toBe(2);
    expect(call.output.trim()).toBe(
      'a2e-gateway: call: unknown option --tokn; did you mean --token? (run a2e-gateway call --help for its options)',
    );
    // call has no --port: still one line naming the command and its --help, without the parser's raw message
    const far = await onTerminal(['call', 'run_command', '--prot', '9000']);
    expect(far.exitCode).toBe(2);
    expect(far.output.trim()).toBe(
      'a2e-gateway: call: unknown option --prot (run a2e-gateway call --help for its options)',
    );
    for (const r of [serve, call, far]) expect(r.output).not.toMatch(/Unknown option|as in '--/);
  });

  it("serve --help prints serve's own options, not the command list; exit 0", async () => {
    const r = await onTerminal(['serve', '--help']);
    expect(r.exitCode).toBe(0);
    expect(r.output).toMatch(/^Usage: a2e-gateway serve \[options\]/);
    for (const option of ['--config FILE', '--host HOST', '--port PORT', '--help']) expect(r.output).toContain(option);
    expect(r.output).not.toContain('Client commands');
    expect(r.output).not.toMatch(/^\s+list\b/m);
  });
});
