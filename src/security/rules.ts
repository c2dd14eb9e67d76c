/**
 * Tool rules as used by `policy` and per-token allow/deny: a tool-name glob
 * (`*` any run of characters, `?` one character; case-sensitive, on the exact
 * canonical name), `tag:NAME` or `kind:NAME`. Compiled once.
 */
import type { ToolDefinition } from '../protocol/index.js';

export type ToolMatcher = (tool: ToolDefinition) => boolean;

export function globToRegExp(glob: string): RegExp {
  const body = [...glob]
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 'su');
}

function compileRule(rule: string): ToolMatcher {
  if (rule.startsWith('tag:')) {
    const tag = rule.slice(4);
    return (t) => t.tags.includes(tag);
  }
  if (rule.startsWith('kind:')) {
    const kind = rule.slice(5);
    return (t) => t.kind === kind;
  }
  if (!/[*?]/.test(rule)) return (t) => t.name === rule;
  const re = globToRegExp(rule);
  return (t) => re.test(t.name);
}

/** A matcher that is true when any rule matches (false for an empty list). */
export function compileRules(rules: readonly string[]): ToolMatcher {
  const matchers = rules.map(compileRule);
  if (matchers.length === 0) return () => false;
  return (t) => matchers.some((m) => m(t));
}
