/**
 * The engine's ApprovalGate built from config: `approvals.require`, a static token's `approve`, the `approve` of the
 * JWT rules a token matched; each rule a tool rule (rules.ts) with optional conditions on arguments. And who may
 * decide (`approvals.approvers`, JWT rules with `approver: true`).
 */
import type { ApprovalGate, ApprovalNeed, Caller } from '../engine/index.js';
import type { ToolDefinition } from '../protocol/index.js';
import type { ApprovalRule, ApprovalsConfig, ArgumentCondition } from './approvals-config.js';
import type { AuthConfig } from './config.js';
import type { JwtRules } from './jwt.js';
import { compileRules, globToRegExp } from './rules.js';

type RuleMatcher = (tool: ToolDefinition, args: Record<string, unknown>) => string | undefined;

type Scalar = string | number | boolean;

function conditionMatcher(c: ArgumentCondition): (value: unknown) => boolean {
  const checks: ((v: unknown) => boolean)[] = [];
  if (c.equals !== undefined) checks.push((v) => v === c.equals);
  if (c.in !== undefined) checks.push((v) => c.in!.includes(v as Scalar));
  if (c.not_in !== undefined) checks.push((v) => !c.not_in!.includes(v as Scalar));
  if (c.glob !== undefined) {
    const re = pathGlob(c.glob);
    checks.push((v) => typeof v === 'string' && re.test(v));
  }
  if (c.not_glob !== undefined) {
    const re = pathGlob(c.not_glob);
    checks.push((v) => typeof v !== 'string' || !re.test(v));
  }
  return (v) => checks.every((check) => check(v));
}

/** `**` any run of characters, `*` any run without "/", `?` one character. */
function pathGlob(glob: string): RegExp {
  const body = glob
    .split('**')
    .map((part) => globToRegExp(part).source.slice(1, -1).replaceAll('.*', '[^/]*'))
    .join('.*');
  return new RegExp(`^${body}$`, 'su');
}

function compileRule(rule: ApprovalRule): RuleMatcher {
  const label = typeof rule === 'string' ? rule : JSON.stringify(rule);
  const tool = compileRules([typeof rule === 'string' ? rule : rule.tool]);
  if (typeof rule === 'string') return (t) => (tool(t) ? label : undefined);
  const conditions = Object.entries(rule.when).map(([name, c]) => [name, conditionMatcher(c)] as const);
  return (t, args) => (tool(t) && conditions.every(([name, matches]) => matches(args[name])) ? label : undefined);
}

function compileAll(rules: readonly ApprovalRule[]): RuleMatcher | undefined {
  if (rules.length === 0) return undefined;
  const matchers = rules.map(compileRule);
  return (t, args) => {
    for (const m of matchers) {
      const hit = m(t, args);
      if (hit !== undefined) return hit;
    }
    return undefined;
  };
}

export interface ApprovalSetup {
  gate: ApprovalGate;
  /** May this principal (null: no auth configured) list and decide approvals? */
  isApprover(principal: string | null): boolean;
}

export function buildApprovals(
  config: ApprovalsConfig,
  auth: AuthConfig | undefined,
  jwtRules?: (name: string) => JwtRules | undefined,
): ApprovalSetup {
  const global = compileAll(config.require);
  const perToken = new Map<string, RuleMatcher | undefined>(
    (auth?.tokens ?? []).map((t) => [t.name, compileAll(t.approve ?? [])]),
  );
  const compiled = new WeakMap<object, RuleMatcher | undefined>();
  const dynamic = (name: string): RuleMatcher | undefined => {
    const rules = jwtRules?.(name);
    if (!rules?.approve?.length) return undefined;
    if (!compiled.has(rules)) compiled.set(rules, compileAll(rules.approve));
    return compiled.get(rules);
  };
  const timeoutS = config.timeout_s;
  const names = new Set(config.approvers.names);
  const admins = new Set(config.approvers.admins ? (auth?.tokens ?? []).filter((t) => t.admin).map((t) => t.name) : []);
  return {
    gate: {
      need(caller: Caller, tool: ToolDefinition, args: Record<string, unknown>): ApprovalNeed | undefined {
        let rule = global?.(tool, args);
        if (rule === undefined && caller.principal !== null) {
          const own = perToken.has(caller.principal) ? perToken.get(caller.principal) : dynamic(caller.principal);
          rule = own?.(tool, args);
        }
        return rule === undefined ? undefined : { rule, timeoutS };
      },
      selfAllowed: () => config.allow_self,
    },
    isApprover(principal) {
      if (auth === undefined) return true;
      if (principal === null) return false;
      return (
        names.has(principal) ||
        admins.has(principal) ||
        (!perToken.has(principal) && jwtRules?.(principal)?.approver === true)
      );
    },
  };
}
