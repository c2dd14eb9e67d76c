/**
 * Start-up check of the tool rules in `policy` and `auth.tokens[].allow/deny`,
 * against the tools actually loaded. A rule that can never mean anything is
 * a security trap (a misspelt `kind:shel` in a deny list denies nothing), so:
 * an unknown `kind:` or an unknown rule prefix stops the gateway; a name or
 * tag rule that matches no tool yet is logged as a warning (A2A agents may
 * still bring tools of that name).
 */
import type { Logger, RegisteredTool } from '../engine/index.js';
import { similarNames } from '../utils/similar.js';
import type { GatewayConfig } from './schema.js';
import { compileRules } from '../security/rules.js';
import { ConfigError } from '../utils/config-error.js';

/** Kinds that exist even before any tool of them has loaded (A2A agents join later). */
const BUILTIN_KINDS = ['native', 'a2a'];

function configuredRules(config: GatewayConfig): { where: string; rule: string }[] {
  const out: { where: string; rule: string }[] = [];
  const add = (where: string, rules: readonly string[] | undefined) =>
    rules?.forEach((rule, i) => out.push({ where: `${where}[${i}]`, rule }));
  add('policy.allow', config.policy.allow);
  add('policy.deny', config.policy.deny);
  for (const t of config.auth?.tokens ?? []) {
    add(`auth.tokens "${t.name}" allow`, t.allow);
    add(`auth.tokens "${t.name}" deny`, t.deny);
  }
  return out;
}

export function checkPolicyRules(config: GatewayConfig, tools: readonly RegisteredTool[], logger: Logger): void {
  const defs = tools.map((t) => t.definition);
  const kinds = [...new Set([...BUILTIN_KINDS, ...defs.map((d) => d.kind)])];
  for (const { where, rule } of configuredRules(config)) {
    const matches = defs.some(compileRules([rule]));
    if (matches) continue;
    const prefix = /^([A-Za-z_]+):/.exec(rule)?.[1];
    if (prefix === 'kind') {
      const kind = rule.slice(5);
      if (!kinds.includes(kind)) {
        const close = similarNames(kind, kinds, 1);
        throw new ConfigError(
          `${where}: "${rule}" names no tool kind, so it would match nothing; the kinds are ${kinds.join(', ')}` +
            (close.length ? ` (did you mean "kind:${close[0]}"?)` : ''),
        );
      }
    } else if (prefix !== undefined && prefix !== 'tag') {
      const close = similarNames(prefix, ['tag', 'kind'], 1);
      throw new ConfigError(
        `${where}: "${rule}" is not a rule: write a tool-name glob (read_*), tag:NAME or kind:NAME` +
          (close.length ? ` (did you mean "${close[0]}:${rule.slice(prefix.length + 1)}"?)` : ''),
      );
    }
    logger.warn(
      { rule, where },
      `${where}: "${rule}" matches no tool at start-up; check it for a typo (tools of A2A agents that are still loading are not counted)`,
    );
  }
}
