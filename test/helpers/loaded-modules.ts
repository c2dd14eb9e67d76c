/**
 * What a process loaded, module by module, from what the import recorder (test/fixtures/record-imports.mjs) saw
 * it load file by file. dist/ is a bundle: one file (a chunk) holds many of the gateway's modules and of the
 * packages it bundles. Each chunk is replaced by the modules its source map says it was built from (src/server.ts,
 * node_modules/zod/…), as absolute paths; every other file (a package left external, loaded from node_modules) is
 * kept as it was recorded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

const sourcesOf = new Map<string, string[]>();

/** The recorded files (paths or file: URLs, one a line in the recorder's log) as the modules they hold. */
export function loadedModules(recorded: string[]): string[] {
  return recorded.flatMap((entry) => {
    const file = entry.startsWith('file:') ? fileURLToPath(entry) : entry;
    if (!file.startsWith(DIST) || !file.endsWith('.js')) return [file];
    let sources = sourcesOf.get(file);
    if (!sources) {
      const map = `${file}.map`;
      if (existsSync(map))
        sources = (JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] }).sources.map((s) =>
          resolve(dirname(file), s),
        );
      // rolldown's own helpers (CommonJS interop), the one file it writes without a map: none of our modules.
      else if (file === `${DIST}chunks/rolldown-runtime.js`) sources = [];
      else throw new Error(`${file} was loaded but has no source map: rebuild dist/ (npm run build)`);
      sourcesOf.set(file, sources);
    }
    return sources;
  });
}

/** The recorder's log file, read and expanded to modules. */
export const loadedModulesIn = (log: string): string[] =>
  loadedModules(readFileSync(log, 'utf8').split('\n').filter(Boolean));
