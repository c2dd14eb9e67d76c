/**
 * The gateway's one Policy, built from config: capability gating (a session
 * that did not negotiate `tools` gets nothing), then `policy.allow/deny`,
 * then the caller's token allow/deny. The engine uses it for listing,
 * search and calling alike, so what a caller cannot see it cannot call.
 */
import type { Caller, Policy, PolicyDecision } from '../engine/index.js';
import type { ToolDefinition } from '../protocol/index.js';
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

const NO_TOOLS_CAPABILITY: PolicyDecision = Object.freeze({
  allow: false,
  reason:
    'this session did not negotiate the "tools" capability; open a new one with POST /handshake and agent_caps ["tools"]',
});

/** Rules of principals not in auth.tokens (identity-provider tokens), by name. */
export type DynamicRules = (
  name: string,
) => { allow: readonly string[] | undefined; deny: readonly string[] } | undefined;

export function buildPolicy(policy: PolicyConfig, auth: AuthConfig | undefined, dynamicRules?: DynamicRules): Policy {
  const global = ruleSet(policy.allow.length ? policy.allow : undefined, policy.deny);
  const perToken = new Map<string, RuleSet>((auth?.tokens ?? []).map((t) => [t.name, ruleSet(t.allow, t.deny)]));
  // Compiled once per rules object (JWT principals with the same matched rules share one).
  const compiled = new WeakMap<object, RuleSet>();
  const dynamic = (name: string): RuleSet | undefined => {
    const rules = dynamicRules?.(name);
    if (!rules) return undefined;
    let set = compiled.get(rules);
    if (!set) compiled.set(rules, (set = ruleSet(rules.allow, rules.deny)));
    return set;
  };
  const hidden = policy.hide_denied;
  const deny = (reason: string): PolicyDecision =>
    hidden ? { allow: false, reason, hidden: true } : { allow: false, reason };
  const rules = (caller: Caller, tool: ToolDefinition): PolicyDecision => {
    if (global.deny(tool)) return deny('denied by the gateway policy (policy.deny)');
    if (global.allow && !global.allow(tool)) return deny('not in the gateway policy allow list (policy.allow)');
    const staticRules = caller.principal === null ? undefined : perToken.get(caller.principal);
    const own = staticRules ?? (caller.principal === null ? undefined : dynamic(caller.principal));
    if (own) {
      // Say where the rule that refused is: a static token's own lists, or the JWT claim rules that applied.
      const where = (list: string) =>
        staticRules ? `auth.tokens[].${list}` : `auth.jwt.rules[].${list} of the rules its claims match`;
      if (own.deny(tool)) return deny(`denied for token "${caller.principal}" (${where('deny')})`);
      if (own.allow && !own.allow(tool))
        return deny(`not in the allow list of token "${caller.principal}" (${where('allow')})`);
    }
    return ALLOW;
  };
  const noTools = (caller: Caller) => caller.capabilities !== undefined && !caller.capabilities.has('tools');
  // With hide_denied the rules come first: a session without "tools" must not get tool_denied for a
  // hidden tool where a missing one answers unknown_tool.
  if (hidden) {
    return (caller, tool) => {
      const decision = rules(caller, tool);
      return decision.allow && noTools(caller) ? NO_TOOLS_CAPABILITY : decision;
    };
  }
  return (caller, tool) => (noTools(caller) ? NO_TOOLS_CAPABILITY : rules(caller, tool));
}
