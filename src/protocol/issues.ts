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

/** Problems listed in one error; the rest are counted ("… and N more"), so a hostile body cannot make a huge answer. */
export const MAX_PROBLEMS = 20;
/** Longest path or message of one problem, in characters. */
export const MAX_PROBLEM_CHARS = 500;
/** Unknown keys named in one problem. */
const MAX_KEYS_NAMED = 10;

/**
 * `text` cut to at most `max` characters, saying how much was left out.
 * For echoing caller input (names, ids, paths) in messages.
 */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${text.length - max} more characters)`;
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
      const named = issue.keys.slice(0, MAX_KEYS_NAMED).map((k) => JSON.stringify(truncateText(k, 64)));
      const more = issue.keys.length - named.length;
      const keys = named.join(', ') + (more > 0 ? ` and ${more} more` : '');
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

/**
 * Zod issues as path + message pairs; `root` prefixes every path. At most
 * `MAX_PROBLEMS` are listed, each cut to `MAX_PROBLEM_CHARS`; a last entry
 * says how many more there were.
 */
export function toProblems(issues: readonly z.core.$ZodIssue[], root?: string): Problem[] {
  const problems = issues.slice(0, MAX_PROBLEMS).map((issue) => {
    const parts = issue.path.map(String);
    if (root) parts.unshift(root);
    return capProblem({ path: parts.join('.') || '(top level)', message: describeIssue(issue) });
  });
  const more = issues.length - problems.length;
  if (more > 0)
    problems.push({
      path: '(more)',
      message: `${more} more problem${more > 1 ? 's' : ''} not listed; fix the ones above and send again`,
    });
  return problems;
}

/** One problem with its path and message cut to `MAX_PROBLEM_CHARS`. */
export function capProblem(problem: Problem): Problem {
  return {
    path: truncateText(problem.path, MAX_PROBLEM_CHARS),
    message: truncateText(problem.message, MAX_PROBLEM_CHARS),
  };
}

/** "a: x; b: y" */
export const formatProblems = (problems: readonly Problem[]): string =>
  problems.map((p) => `${p.path}: ${p.message}`).join('; ');
