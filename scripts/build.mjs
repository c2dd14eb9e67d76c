/**
 * Builds dist/: the gateway as a bundle (rolldown), its type declarations (tsc), then the console (vite).
 *
 * Why a bundle: Node loads ES modules one file at a time, and the unbundled build had ~380 of them to load
 * before `serve` listened (the gateway's own ~180, zod's ~95, hono's ~30, pino's ~30). Bundled, start-up
 * reads a handful of files. See docs/build.md for what stays external and how workers are found.
 *
 * Usage: node scripts/build.mjs   (npm run build)
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { parseAst } from 'rolldown/parseAst';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');

/**
 * Every file another process or package loads by its path, built from src/<name>.ts to dist/<name>.js.
 * Built together, so the code they share (ToolOutput, ToolError, …) is in shared chunks: one copy of
 * each class, whichever entry a plugin or the CLI came in by.
 */
const ENTRIES = [
  'cli', // the a2e-gateway command (package.json "bin")
  'tools/fs/worker/worker-main', // the privilege-separated file tools' child process (fork, src/tools/fs/worker/worker.ts)
];

/**
 * eval_js's worker thread (new Worker, src/tools/eval/plugin.ts), built on its own as an ES module
 * (dist/tools/eval/worker.mjs): QuickJS's CommonJS build does not keep to the WebAssembly memory it is given, which is
 * what bounds an evaluation's memory; its ES-module build does. It shares no code with the rest (its protocol is types).
 */
const ESM_WORKER = 'tools/eval/worker';

/**
 * Entries that are libraries: the package's exports, and internals the bench and a test drive by path
 * (bench/load/shell-direct.mjs, test/perf/log-destination.test.ts). Each is built as a facade that
 * re-exports its module, so that module's code goes to the chunks the gateway itself loads (were it the
 * entry's own code, serve would load dist/tools/shell/sandbox.js, say, as one more file).
 */
const LIBRARY_ENTRIES = [
  'index', // package "."
  'client/index', // "./client"
  'plugin', // "./plugin"
  'tools/shell/config',
  'tools/shell/sandbox',
  'logger',
  'engine/index',
];

const FACADE = '\0facade:';

/** The facade modules of LIBRARY_ENTRIES. */
const facades = {
  name: 'a2e-library-facades',
  resolveId: (id) => (id.startsWith(FACADE) ? id : null),
  load: (id) =>
    id.startsWith(FACADE)
      ? `export * from ${JSON.stringify(join(ROOT, 'src', `${id.slice(FACADE.length)}.ts`))};`
      : null,
};

/**
 * Dependencies left in node_modules, loaded from there by their own files. Each is loaded lazily (its first
 * use, never at start-up), or finds its own files at run time, or both:
 * prom-client (the first /metrics scrape), the OpenTelemetry SDK (telemetry on), the Redis client (store
 * kind redis), undici (the first http_request, MCP over HTTP, A2A), jose (JWT auth), QuickJS (eval_js's
 * worker; its wasm is found with require.resolve), Ajv (tools with a JSON Schema; createRequire),
 * pino-pretty (a terminal; createRequire), swagger-ui-dist (GET /docs reads its files).
 * Everything else a command loads (hono, zod, pino, yaml, the MCP SDK's pieces, …) is bundled.
 */
const EXTERNAL = [
  'prom-client',
  /^@opentelemetry\//,
  /^@redis\//,
  'undici',
  'jose',
  'quickjs-emscripten-core',
  /^@jitl\//,
  /^ajv(\/|$)/,
  'pino-pretty',
  'swagger-ui-dist',
  // Has an import() of its own (its file resolver, never used: the gateway reads documents itself).
  '@apidevtools/json-schema-ref-parser',
];

/**
 * Stable, meaningful chunk names (no hash: nothing caches these files, and names read well in a profile or a
 * stack trace): a chunk loaded by a dynamic import is named after the module imported (chunks/cli/serve.js,
 * chunks/store/redis/calls.js, chunks/yaml.js); a shared one after the folder or package all its code is
 * from (chunks/store/redis/connection.js, chunks/eventsource-parser.js), else after what rolldown picked.
 */
function chunkFileName(chunk) {
  const where = (id) => {
    id = id.replaceAll('\\', '/');
    const dependency = /.*\/node_modules\/((@[^/]+\/)?[^/]+)\//.exec(id);
    if (dependency) return { dir: dependency[1], file: dependency[1] };
    const own = /\/src\/(.+)\.ts$/.exec(id);
    return own ? { dir: own[1].replace(/\/?[^/]+$/, ''), file: own[1] } : { dir: '?', file: '?' };
  };
  if (chunk.facadeModuleId) return `chunks/${where(chunk.facadeModuleId).file}.js`;
  const dirs = new Set(chunk.moduleIds.filter((id) => !id.startsWith('\0')).map((id) => where(id).dir));
  const [dir] = dirs;
  if (dirs.size === 1 && dir && dir !== '?')
    return chunk.moduleIds.some((id) => id.includes('/node_modules/')) ? `chunks/${dir}.js` : `chunks/${dir}/[name].js`;
  return 'chunks/[name].js';
}

/**
 * zod's error messages in English only: zod exports all of its ~50 locales (`z.locales`), a third of its code,
 * which every start-up would read and compile; the gateway never switches zod's locale (plugins have their own zod).
 */
const zodEnglishOnly = {
  name: 'a2e-zod-english-only',
  load: (id) =>
    /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/.test(id)
      ? `export { default as en } from './en.js';`
      : null,
};

/**
 * pkce-challenge (the MCP SDK's) falls back to `import("node:crypto")` where there is no global crypto (Node < 19, so
 * never here): as a require, so that no import() is left in code the compile cache runs.
 */
const PKCE_IMPORT = 'import("node:crypto").then(m => m.webcrypto)';
const pkceWithoutImport = {
  name: 'a2e-pkce-without-import',
  transform(code, id) {
    if (!/[\\/]node_modules[\\/]pkce-challenge[\\/]/.test(id) || !code.includes('import(')) return null;
    if (!code.includes(PKCE_IMPORT))
      throw new Error(`${id}: its import("node:crypto") is not where the build expects it; update pkceWithoutImport`);
    return { code: code.replace(PKCE_IMPORT, 'Promise.resolve(require("node:crypto").webcrypto)'), map: null };
  },
};

/**
 * Fails the build if a dynamic import() is left in a built file other than chunks/native-import.js: code the
 * compile cache gives back cannot run one (src/compile-cache.ts), so the cache compiles every file without an import
 * callback, and a stray import() would fail at run time, in whatever path reaches it first.
 */
function checkDynamicImports(dir) {
  const found = [];
  const visit = (node, file) => {
    if (!node || typeof node !== 'object') return;
    if (node.type === 'ImportExpression') found.push(file);
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) for (const v of value) visit(v, file);
      else if (value && typeof value === 'object' && typeof value.type === 'string') visit(value, file);
    }
  };
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) {
        if (path !== join(DIST, 'ui')) walk(path);
      } else if (name.endsWith('.js') && path !== join(DIST, 'chunks', 'native-import.js')) {
        visit(parseAst(readFileSync(path, 'utf8'), { sourceType: 'script' }), relative(DIST, path));
      }
    }
  };
  walk(dir);
  if (found.length)
    throw new Error(
      `import() left in ${[...new Set(found)].join(', ')}: load packages with src/load-package.ts, import plugins with src/native-import.ts`,
    );
}

const isExternal = (id) =>
  EXTERNAL.some((e) => (typeof e === 'string' ? id === e || id.startsWith(`${e}/`) : e.test(id)));

function run(command, args) {
  const r = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

/** Removes the previous build's JavaScript and maps (not the declarations tsc keeps incrementally, not dist/ui). */
function cleanJs(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (path !== join(DIST, 'ui')) cleanJs(path);
    } else if (/\.(m?js|js\.map)$/.test(name)) rmSync(path);
  }
}

async function bundle() {
  try {
    cleanJs(DIST);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  /** What both builds share: Node 20, the externals, and the output's encoding, maps and minification. */
  const common = {
    platform: 'node',
    tsconfig: join(ROOT, 'tsconfig.build.json'),
    external: isExternal,
    transform: { target: 'node20' },
    logLevel: 'warn',
  };
  const commonOutput = {
    dir: DIST,
    // ASCII-only files: Node decodes them on its fast path and V8 keeps them as one-byte strings (the sources'
    // "—" and "…" would make every chunk holding one a two-byte string, slower to decode and to scan).
    charset: 'ascii',
    sourcemap: true,
    // The maps point at src/ (as tsc's did) without a copy of every source, bundled packages' included.
    sourcemapExcludeSources: true,
    minify: process.env.A2E_BUILD_MINIFY !== '0',
  };
  await build({
    ...common,
    input: { [ESM_WORKER]: join(ROOT, 'src', `${ESM_WORKER}.ts`) },
    output: { ...commonOutput, format: 'esm', entryFileNames: '[name].mjs' },
  });
  await build({
    ...common,
    input: {
      ...Object.fromEntries(ENTRIES.map((e) => [e, join(ROOT, 'src', `${e}.ts`)])),
      ...Object.fromEntries(LIBRARY_ENTRIES.map((e) => [e, `${FACADE}${e}`])),
    },
    plugins: [facades, zodEnglishOnly, pkceWithoutImport],
    output: {
      ...commonOutput,
      // CommonJS (dist/package.json says so): Node 20 can cache the compiled code of a script (vm.Script's
      // cachedData, src/compile-cache.ts) but not of an ES module, and compiling is much of start-up.
      format: 'cjs',
      // The one import() the gateway keeps (src/native-import.ts) in a chunk of its own, which the compile cache
      // leaves to Node's loader; checkDynamicImports() fails the build if another import() is left anywhere.
      codeSplitting: { groups: [{ name: 'native-import', test: /[\\/]src[\\/]native-import\.ts$/ }] },
      entryFileNames: '[name].js',
      chunkFileNames: chunkFileName,
      strictExecutionOrder: process.env.A2E_BUILD_STRICT === '1',
    },
  });
}

const started = performance.now();
// Declarations only: the JavaScript is rolldown's. tsc also type-checks the sources.
run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
await bundle();
checkDynamicImports(DIST);
// The bundle is CommonJS in a "type": "module" package: this file tells Node so for everything under dist/.
writeFileSync(join(DIST, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
// package.json's "bin": rolldown writes files 0644, and `npx a2e-gateway`, the docs' desktop MCP client snippet and
// examples/ run dist/cli.js itself, so every rebuild must leave it executable (its shebang is src/cli.ts's first line).
chmodSync(join(DIST, 'cli.js'), 0o755);
console.log(`dist/: bundled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
