/**
 * "Did you mean" for an unknown config key: a key that exists elsewhere in the schema (`port:` at the top level →
 * `server.port`), else a key of the same section it is probably a typo of (`prot` → `port`). The schema is walked,
 * so every section added to it is covered without a list to keep.
 */
import type { z } from 'zod';
import { editDistance, similarNames } from '../utils/similar.js';

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
};

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object schemas `schema` may be (through defaults, optionals, pipes and unions). */
function objectsOf(schema: z.ZodType | undefined, depth = 0): Array<Record<string, z.ZodType>> {
  if (!schema || depth > 8) return [];
  const def = defOf(schema);
  if (def.type === 'object' && def.shape) return [def.shape];
  const inner = def.innerType ?? def.in;
  if (inner) return objectsOf(inner, depth + 1);
  if (def.type === 'union' && def.options) return def.options.flatMap((o) => objectsOf(o, depth + 1));
  return [];
}

/** What a path segment leads to inside `schema`: a key of an object, an element of a list, a value of a record. */
function child(schema: z.ZodType, segment: string, depth = 0): z.ZodType | undefined {
  if (depth > 8) return undefined;
  const def = defOf(schema);
  if (def.type === 'object') return def.shape?.[segment];
  if (def.type === 'array') return def.element;
  if (def.type === 'record') return def.valueType;
  const inner = def.innerType ?? def.in;
  if (inner) return child(inner, segment, depth + 1);
  for (const option of def.type === 'union' ? (def.options ?? []) : []) {
    const found = child(option, segment, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** Every fixed key path in `schema` (records' and lists' own keys left out), as dotted paths. */
function keyPaths(schema: z.ZodType, prefix: string[] = [], out: string[][] = [], depth = 0): string[][] {
  if (depth > 6) return out;
  for (const shape of objectsOf(schema)) {
    for (const [key, value] of Object.entries(shape)) {
      out.push([...prefix, key]);
      keyPaths(value, [...prefix, key], out, depth + 1);
    }
  }
  return out;
}

const pathsCache = new WeakMap<z.ZodType, string[][]>();

/** The suggestion for unknown `key` at `path` in `root` (e.g. `did you mean server.port?`), or null. */
export function suggestKey(root: z.ZodType, path: readonly string[], key: string): string | null {
  let here: z.ZodType | undefined = root;
  for (const segment of path) here = here && child(here, segment);
  const siblings = here ? objectsOf(here).flatMap((s) => Object.keys(s)) : [];
  // A typo of a key of this section: a few edits away (not merely containing it: `port` is not `transport`).
  const typo = similarNames(key, siblings, 1).filter((n) => editDistance(key.toLowerCase(), n.toLowerCase(), 3) <= 3);
  let paths = pathsCache.get(root);
  if (!paths) pathsCache.set(root, (paths = keyPaths(root)));
  // The same key elsewhere, nearest the top first: a key put in the wrong section.
  const elsewhere = paths
    .filter((p) => p.at(-1) === key)
    .sort((a, b) => a.length - b.length)
    .slice(0, 2);
  if (typo.length === 0 && elsewhere.length === 0) return null;
  const named = [...typo.map((n) => `"${n}"`), ...elsewhere.map((p) => p.join('.'))];
  return `did you mean ${named.join(' or ')}?${typo.length === 0 ? ' (move it there)' : ''}`;
}
