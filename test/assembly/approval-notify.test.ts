/**
 * approvals.notify against a real webhook receiver on 127.0.0.1: a new pending approval is POSTed (summary and
 * console link, no argument values), retried with backoff after a failure; the SSRF rules of tools.http apply (a
 * private address not in tools.http.allow_hosts is refused and logged); a failing webhook never holds the call.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin, echoTool } from '../helpers/plugins.js';
import { callBody, postJson, startGateway } from '../helpers/server.js';
import { waitFor } from '../helpers/a2a-stub.js';
import { LogCapture } from '../helpers/log-capture.js';

let receiver: Server;
let hookUrl: string;
const received: { at: number; body: any }[] = [];
let failFirst = 0;
beforeAll(async () => {
  receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      received.push({ at: Date.now(), body: JSON.parse(text) });
      res.statusCode = failFirst-- > 0 ? 500 : 204;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

async function gatedCall(allowLoopback: boolean, log?: LogCapture) {
  const gw = await startGateway({
    plugins: [definePlugin('t', [echoTool])],
    ...(log && { logger: log.logger }),
    config: {
      tools: { http: { enabled: false, allow_hosts: allowLoopback ? ['127.0.0.1'] : [] } },
      approvals: { require: ['echo'], notify: { url: hookUrl, console_url: 'https://gw.example.com', attempts: 3 } },
    },
  });
  const call = postJson(`${gw.url}/tool/call`, callBody('echo', { text: 'secret-argument' }));
  const approval = await waitFor(
    'pending',
    async () => ((await fetch(`${gw.url}/admin/approvals`).then((r) => r.json())) as any).approvals[0],
  );
  return { gw, call, approval };
}

describe('approvals.notify', () => {
  it('POSTs a summary of a pending approval with its console link, retried with backoff after a failure', async () => {
    received.length = 0;
    failFirst = 1;
    const { gw, call, approval } = await gatedCall(true);
    try {
      await waitFor('two attempts', () => (received.length >= 2 ? true : undefined));
      expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(400);
      expect(received[1]!.body).toMatchObject({
        type: 'approval.pending',
        id: approval.id,
        tool_name: 'echo',
        console_url: 'https://gw.example.com/ui/#approvals',
        url: approval.url,
      });
      expect(JSON.stringify(received[1]!.body)).not.toContain('secret-argument');
      await postJson(`${gw.url}/admin/approvals/${approval.id}`, { decision: 'approve' });
      expect((await call).json.data.success).toBe(true);
      await new Promise((r) => setTimeout(r, 700));
      expect(received).toHaveLength(2); // delivered: no further attempt
    } finally {
      await gw.close();
    }
  });

  it('refuses a private address not in tools.http.allow_hosts, logs it, and the call still waits for its decision', async () => {
    received.length = 0;
    const log = new LogCapture('warn');
    const { gw, call, approval } = await gatedCall(false, log);
    try {
      await waitFor('the failure logged', () => (log.text.includes('approvals.notify') ? true : undefined), 15_000);
      expect(received).toEqual([]);
      const line = log.records.find((r) => r.msg.includes('approvals.notify'))!;
      expect(line.msg).toMatch(/not told of a pending approval: .*127\.0\.0\.1/);
      expect(line.attempts).toBe(3);
      await postJson(`${gw.url}/admin/approvals/${approval.id}`, { decision: 'deny', reason: 'x' });
      expect((await call).json.data.error_code).toBe('tool_denied');
    } finally {
      await gw.close();
    }
  });
});
