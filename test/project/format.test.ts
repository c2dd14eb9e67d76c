/**
 * The formatter (biome.json, `npm run format`): 120 columns, single quotes, trailing commas; the files whose bytes
 * are generated or held by tests (the OpenAPI document, the client's types, Markdown, fixtures) are left alone; and
 * `npm run lint` runs its check. Runs the real Biome binary.
 */
import { readFileSync } from 'node:fs';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const biome = (args: string[], input?: string) =>
  execa('npx', ['biome', ...args], { cwd: ROOT, input, reject: false, stripFinalNewline: false });

describe('formatter (biome.json)', () => {
  it('wraps at 120 columns with single quotes and trailing commas', async () => {
    const long = `export const x = call("alpha-value-number-one", "beta-value-number-two", "gamma-value-number-three", "delta-value-four");\n`;
    expect(long.length).toBeGreaterThan(120);
    const { stdout, exitCode } = await biome(['format', '--stdin-file-path=src/x.ts'], long);
    expect(exitCode).toBe(0);
    expect(stdout).toBe(
      "export const x = call(\n  'alpha-value-number-one',\n  'beta-value-number-two',\n  'gamma-value-number-three',\n  'delta-value-four',\n);\n",
    );
    // 120 columns fit on one line.
    const fits = `export const y = call('${'a'.repeat(94)}');\n`;
    expect(fits.length - 1).toBe(120);
    expect((await biome(['format', '--stdin-file-path=src/y.ts'], fits)).stdout).toBe(fits);
  });

  it('leaves generated files, Markdown, package files and fixtures alone', async () => {
    const kept = [
      'openapi/openapi.json',
      'src/client/schema.ts',
      'docs/configuration.md',
      'BENCHMARKS.md',
      'CHAOS.md',
      'package.json',
      'test/fixtures/mcp-test-server.mjs',
    ];
    const { stdout, stderr } = await biome(['format', ...kept]);
    const ignored = (stdout + stderr).slice((stdout + stderr).indexOf('provided but ignored'));
    for (const path of kept) expect(ignored, path).toContain(`- ${path}`);
  });

  it('runs in npm run lint, after ESLint', () => {
    const { scripts } = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.lint).toBe('eslint . && biome format .');
    expect(scripts['format:check']).toBe('biome format .');
    expect(scripts.format).toBe('biome format --write .');
  });
});
