/**
 * The gateway's one Policy, built from config: capability gating (a session
 * that did not negotiate `tools` gets nothing), then `policy.allow/deny`,
 * then the caller's token allow/deny. The engine uses it for listing,
 * search and calling alike, so what a caller cannot see it cannot call.
 */
import type { Policy, PolicyDecision } from '../engine/index.js';
import type { AuthConfig, PolicyConfig } from './config.js';
import { compileRules, type ToolMatcher } from './rules.js';

interface RuleSet {
  allow: ToolMatcher | undefined;
  deny: ToolMatcher;
}

const ALLOW: PolicyDecision = Object.freeze({ allow: true });

function ruleSet(allow: readonly string[] | undefined, deny: readonly string[]): RuleSet {
  return { allow: allow ? compileRules(allow) : undefined, deny: compileRules(deny) };
}

export function buildPolicy(policy: PolicyConfig, auth: AuthConfig | undefined): Policy {
  const global = ruleSet(policy.allow.length ? policy.allow : undefined, policy.deny);
  const perToken = new Map<string, RuleSet>((auth?.tokens ?? []).map((t) => [t.name, ruleSet(t.allow, t.deny)]));
  return (caller, tool) => {
    if (caller.capabilities && !caller.capabilities.has('tools')) {
      return {
        allow: false,
        reason: 'this session did not negotiate the "tools" capability; open a new one with POST /handshake and agent_caps ["tools"]',
      };
    }
    if (global.deny(tool)) return { allow: false, reason: 'denied by the gateway policy (policy.deny)' };
    if (global.allow && !global.allow(tool)) return { allow: false, reason: 'not in the gateway policy allow list (policy.allow)' };
    const own = caller.principal === null ? undefined : perToken.get(caller.principal);
    if (own) {
      if (own.deny(tool)) return { allow: false, reason: `denied for token "${caller.principal}" (auth.tokens[].deny)` };
      if (own.allow && !own.allow(tool)) {
        return { allow: false, reason: `not in the allow list of token "${caller.principal}" (auth.tokens[].allow)` };
      }
    }
    return ALLOW;
  };
}
