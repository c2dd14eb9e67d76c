/**
 * `import()` by Node's own loader, for the one module the gateway imports by a name it learns at run time: an
 * operator's plugin (an ES module or CommonJS, by path or package name).
 *
 * It is built to a chunk of its own (dist/chunks/native-import.js) that the compile cache leaves to Node: code V8
 * gives back from its cache has lost the hook Node's `import()` needs, so an `import()` in cached code fails
 * (src/compile-cache.ts). Every other dynamic import in dist/ is of a bundled chunk or of a package `require` loads,
 * and is built as `require` (scripts/build.mjs checks that this file is the only one left with an `import()`).
 */
export const nativeImport = (specifier: string): Promise<Record<string, unknown>> =>
  import(specifier) as Promise<Record<string, unknown>>;
