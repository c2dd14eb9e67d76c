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
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');

/**
 * Every file another process or package loads by its path, built from src/<name>.ts to dist/<name>.js.
 * Built together, so the code they share (ToolOutput, ToolError, …) is in shared chunks: one copy of
 * each class, whichever entry a plugin or the CLI came in by.
 */
const ENTRIES = [
  'cli', // the a2e-gateway command (package.json "bin")
  'tools/eval/worker', // eval_js's worker thread (new Worker, src/tools/eval/plugin.ts)
  'tools/fs/worker-main', // the privilege-separated file tools' child process (fork, src/tools/fs/worker.ts)
];

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
  load: (id) => (id.startsWith(FACADE) ? `export * from ${JSON.stringify(join(ROOT, 'src', `${id.slice(FACADE.length)}.ts`))};` : null),
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
  if (dirs.size === 1 && dir && dir !== '?') return chunk.moduleIds.some((id) => id.includes('/node_modules/')) ? `chunks/${dir}.js` : `chunks/${dir}/[name].js`;
  return 'chunks/[name].js';
}

/**
 * zod's error messages in English only: zod exports all of its ~50 locales (`z.locales`), a third of its code,
 * which every start-up would read and compile; the gateway never switches zod's locale (plugins have their own zod).
 */
const zodEnglishOnly = {
  name: 'a2e-zod-english-only',
  load: (id) => (/[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/.test(id) ? `export { default as en } from './en.js';` : null),
};

const isExternal = (id) => EXTERNAL.some((e) => (typeof e === 'string' ? id === e || id.startsWith(`${e}/`) : e.test(id)));

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
  await build({
    input: {
      ...Object.fromEntries(ENTRIES.map((e) => [e, join(ROOT, 'src', `${e}.ts`)])),
      ...Object.fromEntries(LIBRARY_ENTRIES.map((e) => [e, `${FACADE}${e}`])),
    },
    plugins: [facades, zodEnglishOnly],
    platform: 'node',
    tsconfig: join(ROOT, 'tsconfig.build.json'),
    external: isExternal,
    transform: { target: 'node20' },
    logLevel: 'warn',
    output: {
      dir: DIST,
      format: 'esm',
      // ASCII-only files: Node decodes them on its fast path and V8 keeps them as one-byte strings (the sources'
      // "—" and "…" would make every chunk holding one a two-byte string, slower to decode and to scan).
      charset: 'ascii',
      sourcemap: true,
      // The maps point at src/ (as tsc's did) without a copy of every source, bundled packages' included.
      sourcemapExcludeSources: true,
      entryFileNames: '[name].js',
      chunkFileNames: chunkFileName,
      minify: process.env.A2E_BUILD_MINIFY !== '0',
      strictExecutionOrder: process.env.A2E_BUILD_STRICT === '1',
    },
  });
}

const started = performance.now();
// Declarations only: the JavaScript is rolldown's. tsc also type-checks the sources.
run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
await bundle();
console.log(`dist/: bundled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
