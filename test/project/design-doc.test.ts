/**
 * DESIGN.md stays true to the tree: every source file it names in backticks exists (a move that forgets the
 * doc fails here), and the rule it states for the engine's door contract holds: `StartOptions` carries no
 * speed flags (a door asks the settled call for what it wants).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const design = readFileSync(resolve(ROOT, 'DESIGN.md'), 'utf8');

describe('DESIGN.md', () => {
  it('names only source files that exist', () => {
    const named = new Set(
      [...design.matchAll(/`((?:src\/)?[a-z0-9-]+(?:\/[a-z0-9-]+)*\/[a-z0-9.-]+\.ts)`/g)].map((m) => m[1]!),
    );
    expect(named.size).toBeGreaterThan(30);
    const missing = [...named].filter((p) => !existsSync(resolve(ROOT, p)) && !existsSync(resolve(ROOT, 'src', p)));
    expect(missing).toEqual([]);
  });

  it('the engine door contract (StartOptions) has no jsonAnswer or lineMerged flag', () => {
    const engine = readFileSync(resolve(ROOT, 'src/engine/engine.ts'), 'utf8');
    const options = engine.slice(
      engine.indexOf('export interface StartOptions'),
      engine.indexOf('\n}\n', engine.indexOf('export interface StartOptions')),
    );
    expect(options).toContain('admitted?: Admitted');
    expect(options).not.toMatch(/jsonAnswer|lineMerged/);
  });
});
