/**
 * A refusal names the config that made it: a static token's own lists (auth.tokens[].allow/deny), or, for a token
 * from the identity provider, the JWT claim rules that applied to it (auth.jwt.rules[].allow/deny), not the static
 * tokens' lists it has none of.
 */
import { describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/index.js';
import { buildPolicy } from '../../src/security/policy.js';

const tool = (name: string) => ({ name, description: name, input_parameters: [] }) as unknown as ToolDefinition;
const caller = (principal: string) => ({ principal, sessionId: null }) as never;

describe('policy refusals name their rule', () => {
  const policy = buildPolicy(
    { allow: [], deny: [], hide_denied: false } as never,
    { tokens: [{ name: 'ci', allow: ['read_*'], deny: ['read_secret'] }] } as never,
    // The rules the claims of JWT principal "alice" matched.
    (name) => (name === 'alice' ? { allow: ['list_*'], deny: ['list_secrets'] } : undefined),
  );

  it('a static token: auth.tokens[].allow / deny', () => {
    expect(policy(caller('ci'), tool('write_file'))).toMatchObject({
      allow: false,
      reason: 'not in the allow list of token "ci" (auth.tokens[].allow)',
    });
    expect(policy(caller('ci'), tool('read_secret'))).toMatchObject({
      allow: false,
      reason: 'denied for token "ci" (auth.tokens[].deny)',
    });
  });

  it('a JWT principal: auth.jwt.rules[].allow / deny of the rules its claims match', () => {
    expect(policy(caller('alice'), tool('write_file'))).toMatchObject({
      allow: false,
      reason: 'not in the allow list of token "alice" (auth.jwt.rules[].allow of the rules its claims match)',
    });
    expect(policy(caller('alice'), tool('list_secrets'))).toMatchObject({
      allow: false,
      reason: 'denied for token "alice" (auth.jwt.rules[].deny of the rules its claims match)',
    });
    expect(policy(caller('alice'), tool('list_dir'))).toEqual({ allow: true });
  });
});
