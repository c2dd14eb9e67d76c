/**
 * docs/approvals.md as written: its config starts a real gateway (the CLI), and its curl flow runs unchanged
 * against it: the call waits (awaiting_approval), the approval is listed, approved with edited arguments, and the
 * tool wrote the edited content. Its mcp-stdio command (port 0 for 8081) with the same config: the documented
 * tools/call gets the documented progress notification, is approved over the HTTP API, and writes the file.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli.js';
import { McpStdioChild } from '../helpers/mcp-stdio-child.js';

const DOC = readFileSync(new URL('../../docs/approvals.md', import.meta.url), 'utf8');

function block(name: string): string {
  const m = new RegExp(`<!-- ${name}:start -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`).exec(DOC);
  if (!m) throw new Error(`no fenced block ${name} in docs/approvals.md`);
  return m[1]!;
}

describe('docs/approvals.md, run as written', () => {
  let dir: string;
  let gateway: Awaited<ReturnType<typeof startCli>>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'a2e-approvals-doc-'));
    await writeFile(join(dir, 'gateway.yaml'), block('approvals-config'));
    gateway = await startCli(['--config', 'gateway.yaml', '--port', '0'], {}, { cwd: dir });
  }, 60_000);
  afterAll(async () => {
    gateway?.proc.kill('SIGTERM');
    await gateway?.proc;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the curl flow: the call waits, is listed, approved with edited arguments, and runs with them', async () => {
    const script = block('approvals-flow').replaceAll('http://127.0.0.1:8080', gateway.url);
    const r = await execa('sh', ['-ec', script], { cwd: dir, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toEqual({ state: 'awaiting_approval' });
    expect(lines[1]).toMatchObject({
      tool_name: 'write_file',
      arguments: { path: 'notes/plan.txt', content: 'ship it' },
      rule: expect.stringContaining('not_glob'),
    });
    expect(lines[2]).toMatchObject({ decision: 'approve', edited: true });
    expect(lines[3]).toMatchObject({ state: 'completed' });
    expect(await readFile(join(dir, 'workspace', 'notes', 'plan.txt'), 'utf8')).toBe('ship it on Monday');
  });

  it('mcp-stdio --port: the call waits with a progress notification, is approved over HTTP, then runs', async () => {
    const [bin, command, ...args] = block('approvals-stdio').trim().split(/\s+/);
    expect([bin, command]).toEqual(['a2e-gateway', 'mcp-stdio']);
    const child = await McpStdioChild.start({ args: args.map((a) => (a === '8081' ? '0' : a)), cwd: dir });
    try {
      const call = JSON.parse(block('approvals-stdio-call'));
      child.send(call);
      const progress = await child.next((m) => m.method === 'notifications/progress', 'the progress notification');
      const documented = JSON.parse(block('approvals-stdio-progress'));
      expect(progress).toMatchObject({ ...documented, params: { ...documented.params, message: expect.any(String) } });
      const [before, after] = documented.params.message.split('…');
      expect(progress.params.message.startsWith(before)).toBe(true);
      expect(progress.params.message.endsWith(after)).toBe(true);
      const { approvals } = (await fetch(`${child.url}/admin/approvals?door=mcp`).then((r) => r.json())) as any;
      expect(approvals).toMatchObject([{ tool_name: 'write_file', door: 'mcp', arguments: call.params.arguments }]);
      const decided = await fetch(`${child.url}/admin/approvals/${approvals[0].id}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(decided.status).toBe(200);
      const answer = await child.next((m) => m.id === call.id, 'the tools/call answer');
      expect(answer.result.isError ?? false).toBe(false);
      expect(await readFile(join(dir, 'workspace', 'notes', 'plan.txt'), 'utf8')).toBe('ship it');
    } finally {
      await child.close();
    }
  });
});
