/**
 * The tests' folders mirror src/ (DESIGN.md, "Tests"): no test file sits flat in test/, and every test file the
 * docs, the design notes and the sources' comments name exists, so a move that forgets a reference fails here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** Files under `dir` (relative to the repository) whose names match `pattern`; node_modules and dist skipped. */
function filesUnder(dir: string, pattern: RegExp): string[] {
  const found: string[] = [];
  const walk = (abs: string) => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const path = join(abs, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (pattern.test(entry.name)) found.push(relative(ROOT, path));
    }
  };
  walk(resolve(ROOT, dir));
  return found;
}

describe('test layout', () => {
  it('keeps no test file flat in test/: each lives in the folder of what it tests', () => {
    const flat = readdirSync(resolve(ROOT, 'test'), { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
      .map((e) => e.name);
    expect(flat, 'move these into the test/ folder mirroring the src/ folder they test (DESIGN.md, "Tests")').toEqual(
      [],
    );
  });

  it('every test file named in the docs, DESIGN.md and source comments exists', () => {
    const texts = [
      ...readdirSync(ROOT).filter((f) => f.endsWith('.md')),
      ...filesUnder('docs', /\.md$/),
      ...filesUnder('src', /\.ts$/),
      ...filesUnder('scripts', /\.m?js$/),
      ...filesUnder('test', /\.ts$/),
    ];
    const named = new Map<string, string>();
    for (const file of texts) {
      for (const m of readFileSync(resolve(ROOT, file), 'utf8').matchAll(/(?<![\w/.-])test\/[\w/.-]+\.test\.ts/g)) {
        named.set(m[0], file);
      }
    }
    expect(named.size).toBeGreaterThan(50);
    const missing = [...named].filter(([path]) => !existsSync(resolve(ROOT, path))).map(([p, f]) => `${p} (in ${f})`);
    expect(missing).toEqual([]);
  });
});
