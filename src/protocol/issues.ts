import type { z } from 'zod';

export interface Problem {
  /** Dotted path of the offending value, e.g. "arguments.options.depth". */
  path: string;
  message: string;
}

/** JSON type name of a value. */
export function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

// zod's type names → the JSON/spec names users know.
const TYPE_NAMES: Record<string, string> = { int: 'integer', record: 'object', map: 'object' };
const typeName = (t: string) => TYPE_NAMES[t] ?? t;

/**
 * One zod issue in words a user can act on. Parse with `{ reportInput: true }`
 * so a wrong value can be told from a missing one (the input itself is never echoed).
 */
export function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'unrecognized_keys': {
      const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
      return `unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}; remove ${issue.keys.length > 1 ? 'them' : 'it'}`;
    }
    case 'invalid_type':
      // A schema's own wording (see integerSchema) wins over zod's.
      if (/^(expected|required) /.test(issue.message)) return issue.message;
      return issue.input === undefined
        ? `required ${typeName(issue.expected)} is missing`
        : `expected ${typeName(issue.expected)}, got ${typeOf(issue.input)}`;
    case 'invalid_value':
      return `must be one of: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return issue.message;
  }
}

/** Zod issues as path + message pairs; `root` prefixes every path. */
export function toProblems(issues: readonly z.core.$ZodIssue[], root?: string): Problem[] {
  return issues.map((issue) => {
    const parts = issue.path.map(String);
    if (root) parts.unshift(root);
    return { path: parts.join('.') || '(top level)', message: describeIssue(issue) };
  });
}

/** "a: x; b: y" */
export const formatProblems = (problems: readonly Problem[]): string =>
  problems.map((p) => `${p.path}: ${p.message}`).join('; ');
