/** The audit file: one JSON line per call attempt, no argument values or secrets, unforgeable lines, rotation. */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody } from '../helpers/server.js';
import { post, sha256, startSecureGateway, type SecureGateway } from './helpers.js';

const TOKEN = 'audit-token-c0ffee1234567890abcd';
const SECRET_ARG = 'the-argument-value-must-not-be-audited';
const FIELDS = [
  'ts',
  'session_id',
  'token',
  'req_id',
  'correlation_id',
  'tool_name',
  'kind',
  'success',
  'error_code',
  'duration_ms',
  'input_bytes',
  'output_bytes',
  'door',
];

const readLines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('audit file', () => {
  let dir: string;
  let file: string;
  let gw: SecureGateway;
  const auth = { Authorization: `Bearer ${TOKEN}` };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-audit-'));
    file = join(dir, 'logs', 'audit.jsonl');
    gw = await startSecureGateway({
      config: {
        auth: { tokens: [{ name: 'auditor', token_sha256: sha256(TOKEN), deny: ['run_cmd'] }] },
        audit: { path: file },
      },
    });
  });
  afterAll(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes one line per call with exactly the documented fields, the token name and sizes, never values', async () => {
    const hs = await post(`${gw.url}/handshake`, { agent_caps: ['tools'] }, auth);
    const session = hs.json.session_id as string;
    const ok = await post(
      `${gw.url}/tool/call`,
      callBody('echo', { text: SECRET_ARG }, { id: 'req-ok', correlation_id: 'turn-1', session_id: session }),
      auth,
    );
    expect(ok.status).toBe(200);
    const denied = await post(
      `${gw.url}/tool/call`,
      callBody('run_cmd', {}, { id: 'req-denied', session_id: session }),
      auth,
    );
    expect(denied.status).toBe(403);
    const unknown = await post(
      `${gw.url}/tool/call`,
      callBody('no_such', { x: SECRET_ARG }, { id: 'req-unknown', session_id: session }),
      auth,
    );
    expect(unknown.status).toBe(404);
    const invalid = await post(
      `${gw.url}/tool/call`,
      callBody('echo', { text: 5 }, { id: 'req-invalid', session_id: session }),
      auth,
    );
    expect(invalid.status).toBe(422);
    await gw.gateway.security.auditFile!.flush();

    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(SECRET_ARG);
    expect(text).not.toContain(TOKEN);
    const lines = readLines(file);
    expect(lines).toHaveLength(4);
    for (const l of lines) expect(Object.keys(l)).toEqual(FIELDS);
    const [first, second, third, fourth] = lines;
    expect(first).toMatchObject({
      session_id: session,
      token: 'auditor',
      req_id: 'req-ok',
      correlation_id: 'turn-1',
      tool_name: 'echo',
      kind: 'native',
      success: true,
      error_code: null,
    });
    expect(first!.input_bytes).toBeGreaterThan(SECRET_ARG.length);
    expect(first!.output_bytes).toBe(JSON.stringify({ text: SECRET_ARG }).length);
    expect(typeof first!.duration_ms).toBe('number');
    expect(typeof first!.ts).toBe('number');
    expect(second).toMatchObject({
      req_id: 'req-denied',
      tool_name: 'run_cmd',
      success: false,
      error_code: 'tool_denied',
      kind: 'shell',
    });
    expect(third).toMatchObject({
      req_id: 'req-unknown',
      tool_name: 'no_such',
      success: false,
      error_code: 'unknown_tool',
      kind: null,
    });
    expect(fourth).toMatchObject({ req_id: 'req-invalid', error_code: 'invalid_arguments' });
  });

  it('cannot be forged with control characters in names and ids', async () => {
    const before = readLines(file).length;
    const forged = '{"ts":0,"token":"admin","tool_name":"rm","success":true}';
    const hs = await post(`${gw.url}/handshake`, { agent_caps: ['tools'] }, auth);
    const r2 = await post(
      `${gw.url}/tool/call`,
      callBody(
        `echo\n${forged}\r\u2028\u0000`,
        { text: 'x' },
        { id: `id\n${forged}`, correlation_id: `c\r\n${forged}`, session_id: hs.json.session_id },
      ),
      auth,
    );
    expect(r2.status).toBe(404);
    await gw.gateway.security.auditFile!.flush();
    const lines = readLines(file);
    expect(lines).toHaveLength(before + 1);
    const last = lines.at(-1)!;
    expect(last.tool_name).toBe(`echo\n${forged}\r\u2028\u0000`);
    expect(last.req_id).toBe(`id\n${forged}`);
    expect(last.token).toBe('auditor');
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(before + 1);
  });
});

describe('audit of call attempts refused before the engine', () => {
  let dir: string;
  let file: string;
  let gw: SecureGateway;
  const auth = { Authorization: `Bearer ${TOKEN}` };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2e-audit-gate-'));
    file = join(dir, 'audit.jsonl');
    gw = await startSecureGateway({
      config: { auth: { tokens: [{ name: 'auditor', token_sha256: sha256(TOKEN) }] }, audit: { path: file } },
    });
  });
  afterAll(async () => {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records a missing or wrong token, a foreign origin and a missing session, never the token or the arguments', async () => {
    const noToken = await post(`${gw.url}/tool/call`, callBody('echo', { text: SECRET_ARG }), {
      'X-Request-Id': 'gate-1',
    });
    expect(noToken.status).toBe(401);
    const wrongToken = await post(`${gw.url}/tool/calls`, callBody('echo', { text: 'x' }), {
      Authorization: 'Bearer not-the-token',
      'X-Request-Id': 'gate-2',
    });
    expect(wrongToken.status).toBe(401);
    const foreign = await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }), {
      ...auth,
      Origin: 'https://evil.example',
      'X-Request-Id': 'gate-3',
    });
    expect(foreign.status).toBe(403);
    // Authenticated, but this gateway requires a session and none was sent: refused by the route, body known.
    const noSession = await post(
      `${gw.url}/tool/call`,
      callBody('echo', { text: SECRET_ARG }, { id: 'req-nosession', correlation_id: 'turn-9' }),
      auth,
    );
    expect(noSession.status).toBe(401);
    // Not a call attempt: refused, logged, not audited.
    expect((await fetch(`${gw.url}/agents`)).status).toBe(401);
    await gw.gateway.security.auditFile!.flush();

    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(SECRET_ARG);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('not-the-token');
    const lines = readLines(file);
    for (const l of lines) expect(Object.keys(l)).toEqual(FIELDS);
    expect(lines.map((l) => [l.req_id, l.error_code, l.tool_name, l.token])).toEqual([
      ['gate-1', 'unauthorized', '', null],
      ['gate-2', 'unauthorized', '', null],
      ['gate-3', 'forbidden', '', null],
      ['req-nosession', 'unauthorized', 'echo', 'auditor'],
    ]);
    expect(lines.every((l) => l.success === false && l.kind === null)).toBe(true);
    expect(lines[3]).toMatchObject({ correlation_id: 'turn-9' });
  });
});

describe('audit rotation', () => {
  it('rotates by size, keeping audit.keep old files, losing no record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2e-audit-rot-'));
    const file = join(dir, 'audit.jsonl');
    const gw = await startSecureGateway({ config: { audit: { path: file, max_bytes: 2000, keep: 2 } } });
    try {
      const n = 40;
      for (let i = 0; i < n; i++)
        expect((await post(`${gw.url}/tool/call`, callBody('echo', { text: 'x' }, { id: `r${i}` }))).status).toBe(200);
      await gw.gateway.security.auditFile!.flush();
      // The live file is created again by the next record after a rotation.
      const files = readdirSync(dir).sort();
      expect(files.filter((f) => f !== 'audit.jsonl')).toEqual(['audit.jsonl.1', 'audit.jsonl.2']);
      for (const f of files) expect(readFileSync(join(dir, f)).length).toBeLessThan(2000 + 400);
      const kept = ['audit.jsonl.2', 'audit.jsonl.1', 'audit.jsonl']
        .filter((f) => files.includes(f))
        .flatMap((f) => readLines(join(dir, f)).map((l) => l.req_id));
      expect(kept.length).toBeGreaterThan(10);
      // The newest records, in order, with no gap.
      const lastIndex = n - 1;
      expect(kept.at(-1)).toBe(`r${lastIndex}`);
      expect(kept).toEqual(kept.map((_, i) => `r${lastIndex - kept.length + 1 + i}`));
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
