/**
 * Where the package's own files are (package.json, dist/ui, the worker entries), wherever the module asking
 * was built to: a bundle chunk in dist/chunks/, an entry in dist/, or src/ when the test runner runs the sources.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** A package's own package.json names it; dist/package.json only says its files are CommonJS. */
function isPackageRoot(dir: string): boolean {
  const file = join(dir, 'package.json');
  return existsSync(file) && typeof (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'string';
}

/** The package's root directory: the nearest one above this module whose package.json names a package. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!isPackageRoot(dir)) {
    const up = dirname(dir);
    if (up === dir) throw new Error('a2e-gateway: its package.json is missing; reinstall the package');
    dir = up;
  }
  return (root = dir);
}

/** A file of the built package, by its path in dist/ (`npm test` builds dist/ before the tests run the sources). */
export const distFile = (path: string): string => join(packageRoot(), 'dist', path);
