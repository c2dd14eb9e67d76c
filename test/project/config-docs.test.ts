/**
 * docs/configuration.md is generated from the zod config schema (scripts/config-docs.mjs): this fails when the
 * committed file no longer matches the schema, e.g. after a key was added, renamed, given another default or
 * another comment.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GatewayConfig } from '../../src/config/schema.js';
import { CONFIG_DOCS_PATH, readDescriptions, renderConfigDocs } from '../../scripts/config-docs.mjs';

const descriptions = readDescriptions();

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` generates from the current schema', () => {
    const { text } = renderConfigDocs(GatewayConfig, descriptions);
    const committed = readFileSync(CONFIG_DOCS_PATH, 'utf8');
    if (committed !== text) {
      expect.fail(
        'docs/configuration.md is stale: the config schema changed. Run `npm run docs:config` and commit docs/configuration.md.',
      );
    }
  });

  it('lists every key of every section with its default, and a description for each', () => {
    const { text, missing } = renderConfigDocs(GatewayConfig, descriptions);
    expect(missing, 'keys without a /** … */ comment in the schema').toEqual([]);
    for (const section of Object.keys(GatewayConfig.shape)) expect(text).toContain(`## \`${section}\``);
    expect(text).toMatch(/\| `server\.port` \| integer, 0–65535 \| `8080` \| Port to bind; 0 picks a free one\. \|/);
    expect(text).toMatch(/\| `limits\.max_json_depth` \| integer, 2–1000 \| `64` \|/);
    expect(text).toMatch(/\| `auth\.tokens\[\]\.name` \| string \| \*\*required\*\* \|/);
    expect(text).toContain('| `agents.<id>.mode` | "auto" \\| "poll" | `"auto"` |');
    expect(text).toContain('| `tools.fs.max_workspace_bytes` | integer >0 \\| null | `1073741824` |');
  });

  it('picks up a key added to the schema, with its type and default', () => {
    const extended = GatewayConfig.extend({
      store: z
        .strictObject({ kind: z.enum(['memory', 'redis']).default('memory'), url: z.string().optional() })
        .default({ kind: 'memory' }),
    });
    const { text } = renderConfigDocs(extended, descriptions);
    expect(text).toContain('## `store`');
    expect(text).toContain('| `store.kind` | "memory" \\| "redis" | `"memory"` |');
    expect(text).toContain('| `store.url` | string | unset |');
  });
});
