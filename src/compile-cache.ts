/**
 * Start-up without recompiling the bundle: V8's compiled code for the package's own dist/ files, kept in
 * dist/.compile-cache/ and handed back to V8 on the next start.
 *
 * Node 20 compiles every file it loads from source on every start (`module.enableCompileCache` is Node 22's),
 * and for `a2e-gateway serve` that is a good part of its time to listening. A CommonJS file compiled as a
 * `vm.Script` can be given the code V8 made for it last time (`cachedData`), and after a run the script gives
 * its code back (`createCachedData`) with the functions compiled while it ran, not only its top level.
 *
 * What keeps it safe and quiet:
 * - a cache file is named by a hash of the file's source and the V8 version, so a rebuilt or edited file never
 *   meets code made for another (V8 itself checks only the source's length and its own version and flags, and
 *   rejects what does not fit: the file is then compiled from source as without a cache);
 * - the cache lives in the package's own dist/, writable by whoever could rewrite the code anyway, never in a
 *   shared temporary directory; where dist/ is read-only (a root-owned global install) nothing is written and
 *   start-up is as it was;
 * - files are written whole (a temporary name, then rename), so a process never reads a half-written one;
 * - off with NODE_DISABLE_COMPILE_CACHE=1 (Node 22's name for its own cache), and off when source maps are on
 *   (`--enable-source-maps`: Node maps stack traces only for files its own loader compiled).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import vm from 'node:vm';

/** What the CommonJS loader gives a file's wrapper (Node's own wrapper has the same parameters). */
type Wrapper = (
  exports: unknown,
  require: NodeJS.Require,
  module: Module,
  filename: string,
  dirname: string,
) => unknown;

interface LoaderModule extends Module {
  _compile(content: string, filename: string, ...rest: unknown[]): unknown;
}

interface ModuleInternals {
  _resolveFilename(request: string, parent: Module, isMain: boolean, options?: { paths?: string[] }): string;
  _resolveLookupPaths(request: string, parent: Module): string[] | null;
  _cache: NodeJS.Require['cache'];
  _extensions: NodeJS.RequireExtensions;
}

/** The package's compiled-code cache: `save` writes what this process compiled without a usable cache. */
export interface CompileCache {
  save(): void;
}

const OFF: CompileCache = { save() {} };

const SUFFIX = '.bin';

/** Left to Node's loader: the one file with an `import()` (src/native-import.ts says why). */
const UNCACHED = new Set(['chunks/native-import.js']);

/** `chunks_server.js-<hash>.bin` → `chunks_server.js`: which file of dist/ a cache file is for. */
const cachedFile = (name: string): string => name.slice(0, name.lastIndexOf('-'));

/** `require` for a module, as Node's loader makes it. */
function requireFor(module: Module): NodeJS.Require {
  const loader = Module as unknown as ModuleInternals;
  const require = ((id: string) => module.require(id)) as NodeJS.Require;
  require.resolve = ((request: string, options?: { paths?: string[] }) =>
    loader._resolveFilename(request, module, false, options)) as NodeJS.RequireResolve;
  require.resolve.paths = (request: string) => loader._resolveLookupPaths(request, module);
  require.main = process.mainModule;
  require.cache = loader._cache;
  require.extensions = loader._extensions;
  return require;
}

/**
 * Compiles the CommonJS files under `dir` through the cache in `dir/.compile-cache` from now on.
 *
 * @example
 * const cache = useCompileCache(dirname(fileURLToPath(import.meta.url))); // dist/, where this file was built to
 * const { serve } = await import('./cli/serve.js'); // a require in the bundle: compiled with the cached code, if it fits
 * await serve(argv, process.env); // listening
 * cache.save(); // keep what start-up compiled, if there was no usable cache
 */
export function useCompileCache(dir: string): CompileCache {
  if (process.env.NODE_DISABLE_COMPILE_CACHE || process.sourceMapsEnabled) return OFF;
  const cacheDir = join(dir, '.compile-cache');
  const toSave: Array<{ script: vm.Script; file: string }> = [];
  const proto = Module.prototype as LoaderModule;
  const compile = proto._compile;
  proto._compile = function (this: Module, content: string, filename: string, ...rest: unknown[]) {
    const name = relative(dir, filename).replaceAll('\\', '/');
    if (name.startsWith('..') || !name.endsWith('.js') || UNCACHED.has(name))
      return compile.call(this, content, filename, ...rest);
    const hash = createHash('sha1').update(process.versions.v8).update(content).digest('hex').slice(0, 20);
    const file = join(cacheDir, `${name.replaceAll('/', '_')}-${hash}${SUFFIX}`);
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(file);
    } catch {
      // none yet: compiled from source, and saved by save()
    }
    // The wrapper's opening is a line of its own (lineOffset -1), so lines and columns are the file's own; a
    // shebang line stays a line, as a comment.
    const source = `(function (exports, require, module, __filename, __dirname) {\n${content.startsWith('#!') ? `//${content.slice(2)}` : content}\n})`;
    // No importModuleDynamically: with or without cached code, an `import()` here fails at once, never only on a
    // warm start (the build allows one only in the UNCACHED file).
    const script = new vm.Script(source, { filename, lineOffset: -1, cachedData });
    if (cachedData === undefined || script.cachedDataRejected) toSave.push({ script, file });
    const wrapper = script.runInThisContext() as Wrapper;
    return wrapper.call(this.exports, this.exports, requireFor(this), this, filename, dirname(filename));
  };
  return {
    save() {
      const pending = toSave.splice(0);
      if (pending.length === 0) return;
      try {
        mkdirSync(cacheDir, { recursive: true });
        const existing = readdirSync(cacheDir).filter((name) => name.endsWith(SUFFIX));
        for (const { script, file } of pending) {
          const temporary = `${file}.${process.pid}.tmp`;
          try {
            writeFileSync(temporary, script.createCachedData());
            renameSync(temporary, file);
          } catch (err) {
            rmSync(temporary, { force: true }); // a disk that filled up mid-write leaves nothing behind
            throw err;
          }
          // The same file's code from before a rebuild: its source is gone.
          const name = basename(file);
          for (const old of existing)
            if (old !== name && cachedFile(old) === cachedFile(name)) rmSync(join(cacheDir, old), { force: true });
        }
      } catch {
        // dist/ not writable (a read-only install): start-up compiles from source, as it would without a cache
      }
    },
  };
}
