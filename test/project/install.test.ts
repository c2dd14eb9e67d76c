/**
 * `npm install` on a fresh clone says nothing about install scripts: every dependency's install script is either
 * allowed or denied in package.json's `allowScripts` (npm ≥ 11.x warns "install scripts not yet covered by
 * allowScripts" for each other one). @scarf/scarf (pulled in by swagger-ui-dist) is denied: its postinstall only
 * reports installation statistics, which `scarfSettings.enabled: false` already declines for older npm.
 */
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('npm install', () => {
  it("leaves no dependency's install script unreviewed (no warning on install)", async () => {
    const r = await execa('npm', ['install-scripts', 'ls'], { cwd: ROOT, reject: false, timeout: 60_000 });
    if (/Unknown command/i.test(r.stderr + r.stdout)) {
      throw new Error(
        `this npm (${(await execa('npm', ['--version'])).stdout}) has no "install-scripts" command: install npm 11.19 or later (npm install -g npm@11)`,
      );
    }
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('No packages with unreviewed install scripts.');
  });
});
