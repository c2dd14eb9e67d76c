/**
 * docs/scale-out.md's "Chaos test" section says what the chaos run (test/chaos/) does: held here to the
 * run's own settings, the npm script and the short form CI runs, so neither can change without the other.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { INSTANCES, KILL_EVERY_S, LONG_SECONDS, VARIANTS } from '../chaos/settings.js';

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('docs/scale-out.md, Chaos test', () => {
  it('states the settings the run uses and the commands that run it', async () => {
    const doc = await read('docs/scale-out.md');
    const section = doc.slice(doc.indexOf('\n## Chaos test\n'));
    expect(section.length).toBeGreaterThan(20);
    const text = section.replace(/\s+/g, ' ');
    expect(INSTANCES).toBe(3);
    expect(text).toContain('three gateway processes');
    expect(text).toContain(`SIGKILLed every ${KILL_EVERY_S} s`);
    expect(text).toContain(`It runs ${LONG_SECONDS} s per variant`);
    expect(VARIANTS.map((v) => v.name)).toEqual(['volatile', 'appendonly']);
    expect(text).toContain('`CHAOS_VARIANTS=volatile` (or `appendonly`)');

    const pkg = JSON.parse(await read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.chaos).toContain('vitest run --config test/chaos/vitest.config.ts');
    const short =
      /^CHAOS_VARIANTS=(\w+) CHAOS_SECONDS=(\d+) npx vitest run --config test\/chaos\/vitest\.config\.ts$/m.exec(
        await read('.ci/run'),
      );
    expect(short, '.ci/run runs the short form').not.toBeNull();
    expect(text).toContain(
      `CI runs a ${short![2]} s form of the \`${short![1]}\` variant after the test suite (\`CHAOS_VARIANTS=${short![1]} CHAOS_SECONDS=${short![2]}\``,
    );
  });
});
