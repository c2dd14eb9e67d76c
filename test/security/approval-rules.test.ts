/**
 * The approval rules built from config (security/approval-rules.ts): the argument matcher (equals, in, not_in,
 * glob, not_glob), per-token and JWT-rule `approve` lists, and who is an approver.
 */
import { describe, expect, it } from 'vitest';
import { defineConfig } from '../../src/index.js';
import { buildApprovals } from '../../src/security/approval-rules.js';
import type { ToolDefinition } from '../../src/protocol/index.js';

const tool = (name: string, kind = 'native', tags: string[] = []) =>
  ({ name, kind, tags }) as unknown as ToolDefinition;
const caller = (principal: string | null) => ({ sessionId: '', principal });

describe('approval rules', () => {
  it('matches arguments with equals, in, not_in, glob and not_glob', () => {
    const config = defineConfig({
      approvals: {
        require: [
          { tool: 'http_request', when: { method: { not_in: ['GET', 'HEAD'] } } },
          { tool: 'write_file', when: { path: { not_glob: 'scratch/**' } } },
          { tool: 'read_file', when: { path: { glob: 'secrets/*.env' } } },
          { tool: 'pay', when: { currency: { in: ['EUR', 'USD'] }, live: { equals: true } } },
          'kind:shell',
        ],
      },
    });
    const { gate } = buildApprovals(config.approvals, undefined);
    const need = (name: string, args: Record<string, unknown>, kind?: string) =>
      gate.need(caller(null), tool(name, kind), args) !== undefined;
    expect(need('http_request', { method: 'GET' })).toBe(false);
    expect(need('http_request', { method: 'POST' })).toBe(true);
    expect(need('http_request', {})).toBe(true); // missing: not in the list
    expect(need('write_file', { path: 'scratch/a/b.txt' })).toBe(false);
    expect(need('write_file', { path: 'notes/a.txt' })).toBe(true);
    expect(need('read_file', { path: 'secrets/prod.env' })).toBe(true);
    expect(need('read_file', { path: 'secrets/deep/prod.env' })).toBe(false); // * stays within a segment
    expect(need('pay', { currency: 'EUR', live: true })).toBe(true);
    expect(need('pay', { currency: 'EUR', live: false })).toBe(false);
    expect(need('pay', { currency: 'GBP', live: true })).toBe(false);
    expect(need('run_command', {}, 'shell')).toBe(true);
    expect(need('echo', {})).toBe(false);
    expect(gate.need(caller(null), tool('write_file'), { path: 'x' })).toEqual({
      rule: expect.stringContaining('write_file'),
      timeoutS: 900,
    });
  });

  it("adds a static token's and a JWT rule's approve lists to approvals.require, and names approvers", () => {
    const config = defineConfig({
      auth: {
        tokens: [
          { name: 'bot', token_sha256: 'a'.repeat(64), approve: ['deploy'] },
          { name: 'ops', token_sha256: 'b'.repeat(64), admin: true },
          { name: 'alice', token_sha256: 'c'.repeat(64) },
        ],
      },
      approvals: { require: ['drop_table'], approvers: { names: ['alice'] } },
    });
    const jwt = (name: string) =>
      name === 'jwt-agent'
        ? { allow: undefined, deny: [], approve: ['transfer'] }
        : name === 'jwt-lead'
          ? { allow: undefined, deny: [], approver: true }
          : undefined;
    const { gate, isApprover } = buildApprovals(config.approvals, config.auth, jwt);
    expect(gate.need(caller('bot'), tool('deploy'), {})).toBeDefined();
    expect(gate.need(caller('alice'), tool('deploy'), {})).toBeUndefined();
    expect(gate.need(caller('alice'), tool('drop_table'), {})).toBeDefined();
    expect(gate.need(caller('jwt-agent'), tool('transfer'), {})).toBeDefined();
    expect(gate.need(caller('jwt-lead'), tool('transfer'), {})).toBeUndefined();
    expect([
      isApprover('alice'),
      isApprover('ops'),
      isApprover('jwt-lead'),
      isApprover('bot'),
      isApprover('jwt-agent'),
      isApprover(null),
    ]).toEqual([true, true, true, false, false, false]);
    // admins: false takes the admin tokens out.
    const strict = defineConfig({
      ...config,
      auth: { tokens: [{ name: 'ops', token_sha256: 'b'.repeat(64), admin: true }] },
      approvals: { approvers: { admins: false } },
    });
    expect(buildApprovals(strict.approvals, strict.auth).isApprover('ops')).toBe(false);
  });
});
