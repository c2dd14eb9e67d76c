/**
 * CONFORMANCE.md: `npm run conformance` (scripts/conformance.mjs) owns its `## MCP (conformance runner)` section
 * only, and the committed section says the gateway fails no scenario of the official MCP runner.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations
import { SUITE, withSection } from '../../scripts/conformance.mjs';

const section = '## MCP (conformance runner)\n\nnew results\n';

describe('CONFORMANCE.md', () => {
  it('regenerating replaces only the MCP section; the A2A section and anything else stay as written', () => {
    const before =
      '# Conformance\n\nIntro.\n\n## MCP (conformance runner)\n\nold results\n\n## A2A (TCK)\n\nhand-written, by commit\n';
    expect(withSection(before, section)).toBe(
      '# Conformance\n\nIntro.\n\n## MCP (conformance runner)\n\nnew results\n\n## A2A (TCK)\n\nhand-written, by commit\n',
    );
    // MCP last, or not there yet, or no file at all.
    expect(withSection('# Conformance\n\n## A2A (TCK)\n\nx\n\n## MCP (conformance runner)\n\nold\n', section)).toBe(
      '# Conformance\n\n## A2A (TCK)\n\nx\n\n## MCP (conformance runner)\n\nnew results\n',
    );
    expect(withSection('# Conformance\n\n## A2A (TCK)\n\nx\n', section)).toBe(
      '# Conformance\n\n## A2A (TCK)\n\nx\n\n## MCP (conformance runner)\n\nnew results\n',
    );
    expect(withSection('', section)).toBe(`# Conformance\n\n${section}`);
  });

  it('the committed MCP section names the suite version and has no failure', () => {
    const text = readFileSync(new URL('../../CONFORMANCE.md', import.meta.url), 'utf8');
    const mcp = text.slice(text.indexOf('## MCP (conformance runner)')).split(/\n## /)[0]!;
    expect(mcp).toContain(String(SUITE).replace(/@([^@]*)$/, ' $1'));
    expect(mcp).toMatch(/- Server: \d+ pass, 0 fail/);
    expect(mcp).toMatch(/- Client: \d+ pass, 0 fail/);
    expect(mcp).not.toMatch(/\| fail \|/);
    // Every tools scenario the gateway can serve ran and passed (none left to n/a).
    for (const scenario of [
      'tools-list',
      'tools-call-error',
      'tools-call-with-logging',
      'tools-call-with-progress',
      'tools-call-image',
      'json-schema-2020-12',
    ]) {
      expect(mcp).toContain(`| server | \`${scenario}\` | pass |`);
    }
  });
});
