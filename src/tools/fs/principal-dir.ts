/**
 * The directory name of a principal's workspace (tools.fs.root with `{principal}`). A principal's name comes from
 * a config file or from a JWT claim an identity provider filled in, so it may hold anything: "..", "/", NUL, 10 kB,
 * or letters that look like others ("аdmin" with a Cyrillic а). The name is a readable slug of the safe characters
 * plus a digest of the exact name: the slug never makes a path (no separator, no leading dot), and two principals
 * that differ in any byte get different digests, so different directories.
 */
import { createHash } from 'node:crypto';
import { basename, dirname } from 'node:path';

/** What tools.fs.root holds in place of the principal's directory name. */
export const PRINCIPAL_PLACEHOLDER = '{principal}';

/** The workspace directory of the gateway without auth (no principal): no digest, so no principal's name can be it. */
export const ANONYMOUS_DIR = 'anonymous';

const SLUG_CHARS = 40;

/** The directory name for `principal` (null: a gateway without auth). At most 58 characters of [A-Za-z0-9._-]. */
export function workspaceDirName(principal: string | null): string {
  if (principal === null) return ANONYMOUS_DIR;
  const digest = createHash('sha256').update(principal, 'utf8').digest('hex').slice(0, 16);
  const slug = principal
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._-]+/, '')
    .slice(0, SLUG_CHARS);
  return `${slug || 'p'}-${digest}`;
}

/** Whether tools.fs.root names one workspace per principal. */
export const perPrincipal = (root: string): boolean => root.includes(PRINCIPAL_PLACEHOLDER);

/**
 * Why a tools.fs.root with `{principal}` is not usable, or null: the placeholder must be the whole last path
 * component, once (the directory holding the workspaces is then the operator's, and nothing a principal's name
 * holds can reach above it).
 */
export function principalRootProblem(root: string): string | null {
  if (!perPrincipal(root)) return null;
  const trimmed = root.replace(/\/+$/, '');
  if (basename(trimmed) !== PRINCIPAL_PLACEHOLDER || dirname(trimmed).includes(PRINCIPAL_PLACEHOLDER)) {
    return `"${PRINCIPAL_PLACEHOLDER}" must be the last path component, once (e.g. /srv/a2e/workspaces/${PRINCIPAL_PLACEHOLDER})`;
  }
  return null;
}
