/**
 * The hostile-input suite, table-driven, at the HTTP and engine layer. For
 * every case: the expected clear error, the gateway still serving
 * afterwards, nothing written outside the workspace, no process left behind.
 * (Cases against the native tools — paths, shell, URLs — live with those tools' suites.)
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callBody } from '../helpers/server.js';
import {
  childPids,
  listing,
  post,
  rawRequest,
  sha256,
  slowClient,
  startSecureGateway,
  type SecureGateway,
} from './helpers.js';

const TOKEN = 'hostile-suite-token-13579bdf02468ace';
const auth = { Authorization: `Bearer ${TOKEN}` };

interface Outcome {
  status: number;
  code?: string;
  message?: string;
  json?: any;
}

interface HostileCase {
  name: string;
  send: (gw: SecureGateway, session: string) => Promise<Outcome>;
  expect: { status: number; code?: string; message?: RegExp; check?: (o: Outcome) => void };
}

const asOutcome = (r: { status: number; json: any }): Outcome => ({
  status: r.status,
  code: r.json?.code,
  message: r.json?.message,
  json: r.json,
});

const call = (gw: SecureGateway, body: unknown, headers: Record<string, string> = auth) =>
  post(`${gw.url}/tool/call`, body, headers).then(asOutcome);
const withSession = (
  session: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => callBody(name, args, { session_id: session, ...extra });
const rawJson = (session: string, inner: string) => `{"session_id":"${session}",${inner}}`;

const cases: HostileCase[] = [
  {
    name: 'huge JSON body (over server.body_limit_bytes)',
    send: (gw, s) => call(gw, withSession(s, 'echo', { text: 'A'.repeat(300_000) })),
    expect: { status: 413, code: 'payload_too_large', message: /server\.body_limit_bytes/ },
  },
  {
    name: 'huge array in the arguments',
    send: (gw, s) => call(gw, withSession(s, 'args', { list: new Array(5_000).fill(0) })),
    expect: { status: 422, code: 'invalid_arguments', message: /limits\.max_array_items/ },
  },
  {
    name: 'long string in the arguments',
    send: (gw, s) => call(gw, withSession(s, 'echo', { text: 'B'.repeat(20_000) })),
    expect: { status: 422, code: 'invalid_arguments', message: /limits\.max_string_length/ },
  },
  {
    name: 'deeply nested JSON (100 000 levels)',
    send: (gw, s) =>
      call(
        gw,
        rawJson(s, `"tool_name":"args","arguments":{"meta":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`),
      ),
    expect: { status: 400, code: 'invalid_request', message: /limits\.max_json_depth/ },
  },
  {
    name: 'deeply nested JSON in an envelope field',
    send: (gw, s) =>
      call(
        gw,
        rawJson(
          s,
          `"tool_name":"echo","arguments":{"text":"x"},"correlation_id":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
        ),
      ),
    expect: { status: 400, code: 'invalid_request', message: /limits\.max_json_depth/ },
  },
  {
    name: 'prototype-pollution keys in the arguments',
    send: (gw, s) =>
      call(
        gw,
        rawJson(
          s,
          '"tool_name":"args","arguments":{"__proto__":{"polluted":1},"meta":{"constructor":{"prototype":{"polluted":1}},"__proto__":{"polluted":1}}}',
        ),
      ),
    expect: {
      status: 200,
      check: (o) => {
        expect(o.json.data.data).toEqual({ keys: ['meta'], plainPrototype: true, metaPrototype: true, polluted: null });
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      },
    },
  },
  {
    name: 'prototype-pollution keys in the envelope',
    send: (gw, s) =>
      call(
        gw,
        rawJson(s, '"__proto__":{"tool_name":"echo","arguments":{"text":"x"}},"constructor":{"prototype":{"x":1}}'),
      ),
    expect: { status: 400, code: 'invalid_request', message: /tool_name/ },
  },
  {
    name: 'invalid UTF-8 (lone continuation byte)',
    send: (gw, s) =>
      call(
        gw,
        new Uint8Array(
          Buffer.concat([
            Buffer.from(rawJson(s, '"tool_name":"echo","arguments":{"text":"').slice(0, -2)),
            Buffer.from([0x80]),
            Buffer.from('"}}'),
          ]),
        ),
      ),
    expect: { status: 400, code: 'invalid_request', message: /not valid UTF-8/ },
  },
  {
    name: 'invalid UTF-8 (UTF-16 surrogate encoded as UTF-8)',
    send: (gw, s) =>
      call(
        gw,
        new Uint8Array(
          Buffer.concat([
            Buffer.from(rawJson(s, '"tool_name":"echo","arguments":{"text":"').slice(0, -2)),
            Buffer.from([0xed, 0xb2, 0x80]),
            Buffer.from('"}}'),
          ]),
        ),
      ),
    expect: { status: 400, code: 'invalid_request', message: /not valid UTF-8/ },
  },
  {
    name: 'duplicate keys: the last tool_name is the one checked and called',
    send: (gw, s) => call(gw, rawJson(s, '"tool_name":"echo","arguments":{},"tool_name":"run_cmd"')),
    expect: { status: 403, code: 'tool_denied', message: /"run_cmd"/ },
  },
  {
    name: 'trailing garbage after the JSON',
    send: (gw, s) => call(gw, `${rawJson(s, '"tool_name":"echo","arguments":{"text":"x"}')} {"tool_name":"run_cmd"}`),
    expect: { status: 400, code: 'invalid_request', message: /not valid JSON/ },
  },
  {
    name: 'a non-finite timeout',
    send: (gw, s) => call(gw, rawJson(s, '"tool_name":"echo","arguments":{"text":"x"},"timeout":1e400')),
    expect: { status: 400, code: 'invalid_request', message: /timeout/ },
  },
  ...[
    ['upper case', 'RUN_CMD'],
    ['mixed case', 'Run_Cmd'],
    ['zero-width space', 'run_cmd\u200b'],
    ['zero-width joiner inside', 'run\u200d_cmd'],
    ['BOM prefix', '\ufeffrun_cmd'],
    ['right-to-left override', '\u202erun_cmd'],
    ['NUL byte', 'run_cmd\u0000'],
    ['Cyrillic look-alike', 'run_сmd'],
    ['fullwidth letters', 'ｒｕｎ_cmd'],
    ['trailing space', 'run_cmd '],
    ['combining mark', 'run_cmd\u0301'],
  ].map(
    ([label, name]): HostileCase => ({
      name: `denied tool name differing by ${label}`,
      send: (gw, s) => call(gw, withSession(s, name!, {})),
      expect: {
        status: 404,
        code: 'unknown_tool',
        check: (o) => expect(o.message).not.toMatch(/Did you mean "run_cmd"/),
      },
    }),
  ),
  {
    name: 'allowed tool name in the wrong case',
    send: (gw, s) => call(gw, withSession(s, 'ECHO', { text: 'x' })),
    expect: { status: 404, code: 'unknown_tool', message: /Did you mean "echo"/ },
  },
  {
    name: 'forged Host (DNS rebinding)',
    send: async (gw, s) => {
      const r = await rawRequest(gw.url, {
        path: '/tool/call',
        headers: { Host: 'attacker.example', 'Content-Type': 'application/json', ...auth },
        body: JSON.stringify(withSession(s, 'echo', { text: 'x' })),
      });
      return asOutcome({ status: r.status, json: JSON.parse(r.body) });
    },
    expect: { status: 403, code: 'forbidden', message: /Host header/ },
  },
  {
    name: 'foreign Origin',
    send: (gw, s) => call(gw, withSession(s, 'echo', { text: 'x' }), { ...auth, Origin: 'https://attacker.example' }),
    expect: { status: 403, code: 'forbidden', message: /server\.cors_origins/ },
  },
  {
    name: 'opaque Origin (sandboxed iframe, file://)',
    send: (gw, s) => call(gw, withSession(s, 'echo', { text: 'x' }), { ...auth, Origin: 'null' }),
    expect: { status: 403, code: 'forbidden' },
  },
  {
    name: 'missing token',
    send: (gw, s) => call(gw, withSession(s, 'echo', { text: 'x' }), {}),
    expect: { status: 401, code: 'unauthorized' },
  },
  {
    name: 'token with one extra character',
    send: (gw, s) => call(gw, withSession(s, 'echo', { text: 'x' }), { Authorization: `Bearer ${TOKEN}x` }),
    expect: { status: 401, code: 'unauthorized' },
  },
  {
    name: 'slow request headers (slowloris)',
    send: async (gw) => {
      const { socket, closed } = slowClient(gw.url, 'POST /tool/call HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: ');
      const timer = setInterval(() => socket.write('x'), 150);
      const { ms, received } = await closed;
      clearInterval(timer);
      expect(ms).toBeLessThan(8_000);
      return { status: received ? Number(received.slice(9, 12)) : 408 };
    },
    expect: { status: 408 },
  },
  {
    name: 'slow request body',
    send: async (gw, s) => {
      const body = JSON.stringify(withSession(s, 'echo', { text: 'x' }));
      const { socket, closed } = slowClient(
        gw.url,
        `POST /tool/call HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      let i = 0;
      const timer = setInterval(() => i < body.length - 1 && socket.write(body[i++]!), 150);
      const { ms, received } = await closed;
      clearInterval(timer);
      expect(ms).toBeLessThan(10_000);
      return { status: received ? Number(received.slice(9, 12)) : 408 };
    },
    expect: { status: 408 },
  },
];

describe('hostile inputs', () => {
  let gw: SecureGateway;
  let sandbox: string;
  let session: string;
  let pidsBefore: number[];
  let sandboxBefore: string[];
  let cwdBefore: string[];
  beforeAll(async () => {
    sandbox = mkdtempSync(join(tmpdir(), 'a2e-hostile-'));
    mkdirSync(join(sandbox, 'workspace'));
    mkdirSync(join(sandbox, 'workspace-sibling'));
    gw = await startSecureGateway({
      config: {
        server: { body_limit_bytes: 256 * 1024, headers_timeout_s: 1, request_timeout_s: 2 },
        auth: { tokens: [{ name: 'agent', token_sha256: sha256(TOKEN) }] },
        policy: { deny: ['run_cmd'] },
        limits: { max_json_depth: 32, max_string_length: 10_000, max_array_items: 1_000 },
        tools: { fs: { root: join(sandbox, 'workspace') } },
      },
    });
    const hs = await post(`${gw.url}/handshake`, { agent_caps: ['tools'] }, auth);
    session = hs.json.session_id;
    pidsBefore = childPids();
    sandboxBefore = listing(sandbox);
    cwdBefore = readdirSync(process.cwd()).sort();
  });
  afterAll(async () => {
    await gw.close();
    rmSync(sandbox, { recursive: true, force: true });
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const o = await c.send(gw, session);
    expect(o.status).toBe(c.expect.status);
    if (c.expect.code) expect(o.code).toBe(c.expect.code);
    if (c.expect.message) expect(o.message).toMatch(c.expect.message);
    if (o.message) expect(o.message).not.toMatch(/\n\s+at |node_modules|\/work\//); // no stack or host paths
    c.expect.check?.(o);

    // Still serving: a normal call in the same session works.
    const ok = await call(gw, withSession(session, 'echo', { text: 'still here' }));
    expect(ok.status).toBe(200);
    expect(ok.json.data.data).toEqual({ text: 'still here' });
    // Nothing written outside the workspace, no process left behind, no call left running.
    expect(listing(sandbox)).toEqual(sandboxBefore);
    expect(readdirSync(process.cwd()).sort()).toEqual(cwdBefore);
    expect(childPids()).toEqual(pidsBefore);
    expect(gw.gateway.engine.running).toBe(0);
  });
});
