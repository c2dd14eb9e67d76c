/**
 * The package's public surface is listed on purpose (src/index.ts, src/plugin.ts, src/client/index.ts): this
 * pins it, keeps internals out, and checks that every import in the docs' code examples and the `@example`
 * JSDoc blocks names something the entry really exports.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const ENTRIES: Record<string, string> = {
  'a2e-gateway': 'src/index.ts',
  'a2e-gateway/plugin': 'src/plugin.ts',
  'a2e-gateway/client': 'src/client/index.ts',
};

/** Names (values and types) an entry module exports, read by the type checker. */
function exportedNames(): Record<string, Set<string>> {
  const files = Object.values(ENTRIES).map((f) => join(root, f));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const out: Record<string, Set<string>> = {};
  for (const [name, file] of Object.entries(ENTRIES)) {
    const source = program.getSourceFile(join(root, file))!;
    const symbol = checker.getSymbolAtLocation(source)!;
    out[name] = new Set(checker.getExportsOfModule(symbol).map((s) => s.getName()));
  }
  return out;
}

/** `import { a, type B } from 'a2e-gateway…'` in a piece of text → [entry, names]. */
function importsIn(text: string): Array<[string, string[]]> {
  const found: Array<[string, string[]]> = [];
  for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'(a2e-gateway(?:\/[a-z]+)?)'/g)) {
    const names = m[1]!
      .split(',')
      .map((n) =>
        n
          .replace(/^\s*type\s+/, '')
          .replace(/\s+as\s+\w+/, '')
          .replace(/\s*\*\s*/g, '')
          .trim(),
      )
      .filter(Boolean);
    found.push([m[2]!, names]);
  }
  return found;
}

const names = exportedNames();

describe('public API', () => {
  it('exports the deliberate list from the main entry, and no internals', () => {
    const main = names['a2e-gateway']!;
    for (const expected of [
      'createGateway',
      'defineConfig',
      'ToolPlugin',
      'ToolContext',
      'ToolError',
      'Engine',
      'ToolRegistry',
      'MemoryCallStore',
      'ConfigError',
      'ToolDefinition',
      'a2aPlugin',
    ]) {
      expect(main.has(expected), `a2e-gateway should export ${expected}`).toBe(true);
    }
    for (const internal of [
      'Watcher',
      'LazyChildLogger',
      'levelEnabled',
      'fastToolCallRequest',
      'checkShape',
      'compileArguments',
      'ByteBudget',
      'ToolSearchIndex',
      'ActivityFeed',
      'errorMessage',
      'asGatewayError',
      'similarNames',
      'parserFor',
      'newId',
      'sanitize',
    ]) {
      expect(main.has(internal), `${internal} is internal and must not be exported by a2e-gateway`).toBe(false);
    }
  });

  it('keeps a2e-gateway/plugin to the plugin contract', () => {
    expect([...names['a2e-gateway/plugin']!].sort()).toEqual(
      [
        'Logger',
        'LogFn',
        'PluginFactory',
        'PluginFactoryContext',
        'PluginHost',
        'ToolContext',
        'ToolDefinition',
        'ToolDefinitionInput',
        'ToolError',
        'ToolEventDataMap',
        'ToolEventKind',
        'ToolOutput',
        'ToolParameter',
        'ToolPlugin',
        'UnavailableTool',
      ].sort(),
    );
  });

  it('the runtime main entry matches its declared exports', async () => {
    const mod = await import('../../src/index.js');
    for (const key of Object.keys(mod)) expect(names['a2e-gateway']!.has(key), key).toBe(true);
    expect(typeof mod.createGateway).toBe('function');
  });

  it('every import in README.md, docs/*.md and @example blocks names an export of its entry', () => {
    const texts: Array<[string, string]> = [['README.md', readFileSync(join(root, 'README.md'), 'utf8')]];
    for (const f of readdirSync(join(root, 'docs')))
      if (f.endsWith('.md')) texts.push([`docs/${f}`, readFileSync(join(root, 'docs', f), 'utf8')]);
    for (const f of ['src/server.ts', 'src/engine/plugin.ts', 'src/client/tool-api.ts'])
      texts.push([f, readFileSync(join(root, f), 'utf8')]);
    let checked = 0;
    for (const [file, text] of texts) {
      for (const [entry, imported] of importsIn(text)) {
        const exported = names[entry];
        expect(exported, `${file} imports from unknown entry ${entry}`).toBeDefined();
        for (const name of imported) {
          expect(exported!.has(name), `${file} imports ${name} from '${entry}', which does not export it`).toBe(true);
          checked++;
        }
      }
    }
    // README (plugin, client), docs/plugins.md and the three @example blocks.
    expect(checked).toBeGreaterThanOrEqual(8);
  });
});
