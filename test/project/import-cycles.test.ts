/**
 * No import cycles in src/, type-only imports included: a cycle means two
 * modules are one concept split in two, or a shared type that wants a module
 * of its own (NativeContext, ConfigError, Principal were such). The layer
 * fences (which folder may import which) are ESLint's `no-restricted-imports`
 * in eslint.config.js; this test keeps the files within a layer acyclic too.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

type Graph = Map<string, Set<string>>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Each file's relative imports and re-exports (static and `import()`), as resolved .ts files. */
function importGraph(files: string[]): Graph {
  const graph: Graph = new Map();
  for (const file of files) {
    const deps = new Set<string>();
    const add = (specifier: string) => {
      if (!specifier.startsWith('.')) return;
      const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
      if (existsSync(target)) deps.add(target);
      else if (existsSync(join(target.replace(/\.ts$/, ''), 'index.ts')))
        deps.add(join(target.replace(/\.ts$/, ''), 'index.ts'));
      else throw new Error(`${relative(SRC, file)} imports ${specifier}, which is not a file of src/`);
    };
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
    const visit = (node: ts.Node) => {
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        add(node.moduleSpecifier.text);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        ts.isStringLiteral(node.arguments[0]!)
      ) {
        add((node.arguments[0] as ts.StringLiteral).text);
      } else if (
        ts.isImportTypeNode(node) &&
        ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal)
      ) {
        add(node.argument.literal.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    graph.set(file, deps);
  }
  return graph;
}

/** The strongly connected components of more than one file (or a file importing itself): each holds a cycle. */
function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return found;
}

describe('import graph of src/', () => {
  const graph = importGraph(sourceFiles(SRC));

  it('is read from every file, imports and re-exports alike', () => {
    expect(graph.size).toBeGreaterThan(100);
    // A static import, a re-export, a type-only import and a lazy import() are all edges.
    expect(graph.get(join(SRC, 'server.ts'))).toContain(join(SRC, 'routes/index.ts'));
    expect(graph.get(join(SRC, 'routes/index.ts'))).toContain(join(SRC, 'routes/app.ts'));
    expect(graph.get(join(SRC, 'tools/fs/plugin.ts'))).toContain(join(SRC, 'tools/native-context.ts'));
    expect([...graph.values()].some((deps) => deps.has(join(SRC, 'observability/otel-sdk.ts')))).toBe(true);
  });

  it('finds a cycle when there is one', () => {
    const g: Graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a', 'd'])],
      ['e', new Set(['a'])],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('has no cycles (type-only imports included): move the shared piece into a module of its own', () => {
    const found = cycles(graph).map((c) => c.map((f) => relative(SRC, f)).join(' ⇄ '));
    expect(found, `import cycles in src/:\n${found.join('\n')}`).toEqual([]);
  });

  it('has no cycles between folders (type-only imports included): a layer takes its own config sections and shared wire pieces', () => {
    const folders = folderGraph(graph);
    // The knot this test exists for (security/index.ts read the root GatewayConfig) would show as security ⇄ config.
    expect(
      cycles(new Map([...folders, ['security', new Set([...folders.get('security')!, 'config'])]])).flat(),
    ).toEqual(expect.arrayContaining(['config', 'security']));
    const found = cycles(folders).map((c) => c.join(' ⇄ '));
    expect(found, `folder cycles in src/ (file-level edges: ${edgesOf(graph, found)}):\n${found.join('\n')}`).toEqual(
      [],
    );
  });

  it.each([
    // threads ← confinement ← tools ← dispatch ← worker
    ['tools/fs', ['confinement', 'threads', 'tools', 'worker', 'dispatch.ts']],
    // http (the plumbing) ← api, doors, admin, pages ← table.ts ← app.ts
    ['routes', ['http', 'api', 'doors', 'admin', 'pages', 'openapi', 'table.ts', 'app.ts']],
  ])('the folders of %s import one way (its top files stand alone)', (folder, parts) => {
    const root = join(SRC, folder);
    const sub = (file: string) => (file.startsWith(root + '/') ? relative(root, file).split('/')[0] : undefined);
    const folders = folderGraph(graph, sub);
    expect([...folders.keys()]).toEqual(expect.arrayContaining(parts));
    expect(cycles(folders).map((c) => c.join(' ⇄ '))).toEqual([]);
  });
});

/** A file's node in the folder graph: its top folder under src/ (`store` for store/redis/x.ts), or the root file itself. */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts[0]!;
}

/** The import graph between src/'s top folders (root files stand alone), or between the folders `of` names: an edge where any file imports across. */
function folderGraph(graph: Graph, of: (file: string) => string | undefined = folderOf): Graph {
  const folders: Graph = new Map();
  for (const [file, deps] of graph) {
    const from = of(file);
    if (from === undefined) continue;
    const out = folders.get(from) ?? folders.set(from, new Set()).get(from)!;
    for (const dep of deps) {
      const to = of(dep);
      if (to !== undefined && to !== from) out.add(to);
    }
  }
  return folders;
}

/** The file imports behind the folder cycles found, so the failure names what to move. */
function edgesOf(graph: Graph, found: string[]): string {
  const inCycle = new Set(found.flatMap((c) => c.split(' ⇄ ')));
  const edges: string[] = [];
  for (const [file, deps] of graph) {
    for (const dep of deps) {
      const [a, b] = [folderOf(file), folderOf(dep)];
      if (a !== b && inCycle.has(a) && inCycle.has(b)) edges.push(`${relative(SRC, file)} → ${relative(SRC, dep)}`);
    }
  }
  return edges.join(', ');
}
