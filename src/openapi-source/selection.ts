/**
 * Which operations become tools (openapi.sources.<id>.operations): each
 * pattern is an operationId, a `METHOD /path` glob ("GET /pets/*",
 * "* /admin/**") or `tag:NAME`. Without `include`, only GET and HEAD: an
 * operator opts into writes by naming them.
 */
import picomatch from 'picomatch';
import type { Operation } from './operations.js';

type Matcher = (op: Operation) => boolean;

function matcher(pattern: string): Matcher {
  if (pattern.startsWith('tag:')) {
    const tag = pattern.slice(4);
    return (op) => op.tags.includes(tag);
  }
  const space = pattern.indexOf(' ');
  if (space > 0 && pattern.slice(space + 1).startsWith('/')) {
    const method = pattern.slice(0, space).toUpperCase();
    const path = picomatch(pattern.slice(space + 1), { dot: true });
    return (op) => (method === '*' || method === op.method) && path(op.path);
  }
  return (op) => op.operationId === pattern;
}

export function operationSelector(include: readonly string[] | undefined, exclude: readonly string[]): Matcher {
  const inc = include?.map(matcher);
  const exc = exclude.map(matcher);
  return (op) => {
    if (exc.some((m) => m(op))) return false;
    if (inc) return inc.some((m) => m(op));
    return op.method === 'GET' || op.method === 'HEAD';
  };
}
