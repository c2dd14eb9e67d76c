/**
 * The layer fences of eslint.config.js (`no-restricted-imports`) fire where
 * they should: each case lints one import as if it were written in a file of
 * that path, so a fence that stops matching (a renamed folder, a pattern
 * typo) fails here rather than letting imports point outward unnoticed.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

/** The no-restricted-imports messages for `import { x } from '<specifier>'` in a file at `path`. */
async function fenced(path: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from '${specifier}';\nexport { x };\n`, { filePath: path });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layer fences (npm run lint)', () => {
  it.each([
    ['src/protocol/x.ts', '../engine/index.js', /src\/protocol imports nothing of ours/],
    ['src/wire/x.ts', '../engine/index.js', /src\/wire imports nothing of ours/],
    ['src/wire/x.ts', '../a2a/client.js', /src\/wire imports nothing of ours/],
    ['src/engine/approvals/x.ts', '../../security/auth.js', /src\/engine imports only src\/protocol and src\/utils/],
    ['src/protocol/x.ts', '../utils/entry-list.js', /src\/protocol imports nothing of ours/],
    ['src/utils/x.ts', '../engine/index.js', /src\/utils imports nothing of ours/],
    ['src/utils/x.ts', '../protocol/index.js', /src\/utils imports nothing of ours/],
    ['src/utils/x.ts', 'zod', /src\/utils depends on no package/],
    ['src/engine/x.ts', '../routes/http/errors.js', /src\/engine imports only src\/protocol and src\/utils/],
    ['src/engine/x.ts', '../config/index.js', /src\/engine imports only src\/protocol and src\/utils/],
    ['src/engine/x.ts', '../security/auth.js', /src\/engine imports only src\/protocol and src\/utils/],
    ['src/transport/a2e-http/x.ts', '../../routes/http/errors.js', /the HTTP routes depend on this layer/],
    ['src/tools/fs/x.ts', '../../routes/index.js', /the HTTP routes depend on this layer/],
    ['src/a2a/x.ts', '../routes/http/sse.js', /the HTTP routes depend on this layer/],
    ['src/mcp/x.ts', '../routes/mcp.js', /the HTTP routes depend on this layer/],
    ['src/mcp-server/x.ts', '../routes/app.js', /the HTTP routes depend on this layer/],
    ['src/a2a-server/x.ts', '../routes/a2a-server.js', /the HTTP routes depend on this layer/],
    ['src/store/redis/x.ts', '../../routes/http/errors.js', /the HTTP routes depend on this layer/],
    ['src/operator-plugins/x.ts', '../routes/index.js', /the HTTP routes depend on this layer/],
    ['src/security/x.ts', '../routes/http/guard.js', /the HTTP routes depend on this layer/],
    ['src/security/x.ts', '../config/index.js', /src\/config is the assembly's/],
    ['src/store/redis/x.ts', '../../config/schema.js', /src\/config is the assembly's/],
    ['src/observability/x.ts', '../config/index.js', /src\/config is the assembly's/],
    ['src/routes/http/x.ts', '../../config/index.js', /src\/config is the assembly's/],
    ['src/config/x.ts', '../routes/index.js', /the HTTP routes depend on this layer/],
    ['src/client/x.ts', '../engine/index.js', /src\/client must run in browsers/],
    ['src/client/x.ts', 'node:fs', /src\/client must run in browsers/],
  ])('%s may not import %s', async (path, specifier, message) => {
    const messages = await fenced(path, specifier);
    expect(messages, `${path} importing ${specifier}`).toHaveLength(1);
    expect(messages[0]).toMatch(message);
  });

  it.each([
    ['src/engine/x.ts', '../protocol/index.js'],
    ['src/engine/x.ts', './errors.js'],
    ['src/engine/approvals/x.ts', '../call.js'],
    ['src/engine/approvals/x.ts', '../../protocol/index.js'],
    ['src/engine/x.ts', '../utils/entry-list.js'],
    ['src/utils/x.ts', './entry-list.js'],
    ['src/utils/x.ts', 'node:buffer'],
    ['src/tools/fs/x.ts', '../../utils/id-table.js'],
    ['src/protocol/x.ts', './base.js'],
    ['src/transport/a2e-http/x.ts', '../../engine/index.js'],
    ['src/tools/fs/x.ts', '../native-context.js'],
    ['src/routes/x.ts', '../engine/index.js'],
    ['src/routes/x.ts', '../transport/a2e-http/index.js'],
    ['src/server.ts', './routes/index.js'],
    ['src/a2a-server/x.ts', '../wire/a2a.js'],
    ['src/mcp/x.ts', '../wire/jsonrpc.js'],
    ['src/server.ts', './config/index.js'],
    ['src/cli/x.ts', '../config/index.js'],
    ['src/reload/x.ts', '../config/index.js'],
    ['src/config/x.ts', '../security/config.js'],
    ['src/tools/fs/x.ts', '../config.js'],
    ['src/store/x.ts', './config.js'],
  ])('%s may import %s', async (path, specifier) => {
    expect(await fenced(path, specifier)).toEqual([]);
  });
});
