/**
 * Generates docs/configuration.md from the zod config schema, so the reference cannot go stale:
 *   keys, types, bounds and defaults come from the schema itself (walked at run time);
 *   descriptions come from the `/** … *\/` comments on the schema's keys, read with the TypeScript type
 *   checker from the config's input type (zod keeps each key's declaration, so its comment follows it).
 * A key added anywhere under GatewayConfig (a new section file referenced from src/config/schema.ts) shows up
 * on the next `npm run docs:config`; test/project/config-docs.test.ts fails while the committed file is stale.
 *
 * Usage: npm run docs:config   (builds, then runs this against the built package, dist/index.js)
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { z } from 'zod';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CONFIG_DOCS_PATH = join(ROOT, 'docs', 'configuration.md');
const SAFE_MAX = Number.MAX_SAFE_INTEGER;

/** Key path → the comment on that key in the sources (`agents.<id>.card`, `auth.tokens[].name`). */
export function readDescriptions(root = ROOT) {
  const file = join(root, 'src', 'config', 'schema.ts');
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(file));
  const input = checker.getExportsOfModule(moduleSymbol).find((s) => s.getName() === 'GatewayConfigInput');
  if (!input)
    throw new Error('src/config/schema.ts no longer exports GatewayConfigInput; update scripts/config-docs.mjs');
  const docs = new Map();
  const walk = (type, path, depth) => {
    if (depth > 8) return;
    type = checker.getNonNullableType(type);
    if (checker.isArrayType(type)) return walk(checker.getTypeArguments(type)[0], `${path}[]`, depth + 1);
    for (const member of type.isUnion() ? type.types : [type]) {
      if (!(member.flags & ts.TypeFlags.Object)) continue;
      const index = member.getStringIndexType();
      if (index && member.getProperties().length === 0) {
        walk(index, `${path}.<id>`, depth + 1);
        continue;
      }
      for (const prop of checker.getPropertiesOfType(member)) {
        const key = path ? `${path}.${prop.getName()}` : prop.getName();
        const doc = ts.displayPartsToString(prop.getDocumentationComment(checker)).replace(/\s+/g, ' ').trim();
        if (doc && !docs.has(key)) docs.set(key, doc);
        walk(checker.getTypeOfSymbol(prop), key, depth + 1);
      }
    }
  };
  walk(checker.getDeclaredTypeOfSymbol(input), '', 0);
  return docs;
}

/** Peel default/optional/nullable/pipe wrappers: the schema a key's value is checked against, and how. */
function unwrap(schema) {
  let optional = false;
  let nullable = false;
  let hasDefault = false;
  let defaultValue;
  for (;;) {
    const def = schema._zod.def;
    if (def.type === 'default' || def.type === 'prefault') {
      if (!hasDefault) defaultValue = def.defaultValue;
      hasDefault = true;
      schema = def.innerType;
    } else if (def.type === 'optional' || def.type === 'nullable' || def.type === 'readonly') {
      if (def.type === 'optional') optional = true;
      if (def.type === 'nullable') nullable = true;
      schema = def.innerType;
    } else if (def.type === 'pipe') {
      schema = def.in; // the value as written in the config file
    } else return { schema, optional, nullable, hasDefault, defaultValue };
  }
}

/** `integer, 0–65535`, `"auto" | boolean`, `list of string`… from the key's JSON Schema (input side). */
function typeText(js) {
  if (js.anyOf) return js.anyOf.map(typeText).join(' | ');
  if (js.const !== undefined) return JSON.stringify(js.const);
  if (js.enum) return js.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (js.type === 'array') return `list of ${js.items ? typeText(js.items) : 'any'}`;
  if (
    js.type === 'object' &&
    js.additionalProperties &&
    typeof js.additionalProperties === 'object' &&
    !js.properties
  ) {
    return `map of ${typeText(js.additionalProperties) || 'any'}`;
  }
  if (js.type === 'object') return 'object';
  if (js.type === 'null') return 'null';
  if (!js.type) return 'any';
  let text = js.format === 'uri' ? 'URL' : js.type;
  const low = js.minimum ?? (js.exclusiveMinimum !== undefined ? `>${js.exclusiveMinimum}` : undefined);
  const high = js.maximum !== undefined && js.maximum < SAFE_MAX ? js.maximum : undefined;
  if (low !== undefined && high !== undefined) text += `, ${low}–${high}`;
  else if (low !== undefined)
    text += js.exclusiveMinimum !== undefined && js.minimum === undefined ? ` ${low}` : ` ≥${low}`;
  else if (high !== undefined) text += ` ≤${high}`;
  return text;
}

const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function defaultText(key) {
  if (key.hasDefault) {
    const value = key.defaultValue;
    if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) return '(see keys)';
    return `\`${cell(JSON.stringify(value))}\``;
  }
  return key.optional ? 'unset' : '**required**';
}

/** Every key under the schema, depth first, in schema order. */
function collect(schema, path, out, entry = false) {
  const key = unwrap(schema);
  const def = key.schema._zod.def;
  const child = (s) => unwrap(s).schema._zod.def.type;
  if (def.type === 'object') {
    // A list entry (`[]`) or map entry (`<id>`) is described by its list or map.
    if (path && !entry) out.push({ path, ...key, container: true });
    for (const [name, sub] of Object.entries(def.shape)) collect(sub, path ? `${path}.${name}` : name, out);
    return;
  }
  if (def.type === 'array' && child(def.element) === 'object') {
    out.push({ path, ...key, container: true, type: 'list of objects' });
    collect(def.element, `${path}[]`, out, true);
    return;
  }
  if (def.type === 'record' && child(def.valueType) === 'object') {
    out.push({ path, ...key, container: true, type: 'map of id → object' });
    collect(def.valueType, `${path}.<id>`, out, true);
    return;
  }
  const type = typeText(z.toJSONSchema(key.schema, { io: 'input', unrepresentable: 'any' }));
  out.push({ path, ...key, container: false, type: key.nullable ? `${type} | null` : type });
}

/** The whole docs/configuration.md for a GatewayConfig schema. */
export function renderConfigDocs(GatewayConfig, descriptions = readDescriptions()) {
  const keys = [];
  collect(GatewayConfig, '', keys);
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated by `npm run docs:config` (scripts/config-docs.mjs) from the zod schema in src/config/schema.ts',
    '     and the section files it references. Do not edit by hand: change the schema or its comments, then rerun. -->',
    '',
    "Every key of the gateway's config file (YAML or JSON, `a2e-gateway serve --config FILE`), with its type, its",
    'default and what it does. Every object is strict: an unknown key is an error naming it. `${NAME}` in a value is',
    'replaced by the environment variable NAME. `a2e-gateway config check --config FILE` validates a file and prints',
    'the result with secrets masked; [examples/](../examples/) has commented configs.',
    '',
    "Default `(see keys)`: the section is filled from its keys' defaults when left out. `unset`: optional, no",
    'default. `<id>`: a name you choose (a map entry). `[]`: each entry of a list.',
    '',
  ];
  const sections = [...new Set(keys.map((k) => k.path.split(/[.[]/)[0]))];
  const missing = [];
  for (const section of sections) {
    const top = keys.find((k) => k.path === section);
    lines.push(`## \`${section}\``, '');
    const intro = descriptions.get(section);
    if (intro) lines.push(intro, '');
    if (top && !top.container) {
      lines.push(`Type: ${top.type}. Default: ${defaultText(top)}.`, '');
      continue;
    }
    if (top && top.optional && !top.hasDefault) lines.push('Optional: leave the section out to turn it off.', '');
    lines.push('| Key | Type | Default | Description |', '|---|---|---|---|');
    for (const key of keys) {
      if (key.path === section || !(key.path.startsWith(`${section}.`) || key.path.startsWith(`${section}[`))) continue;
      const description = descriptions.get(key.path);
      // A plain nested object is only a heading for its keys; list it when there is something to say.
      if (key.container && key.type === undefined && !description && key.hasDefault) continue;
      if (!description && !key.container) missing.push(key.path);
      lines.push(
        `| \`${key.path}\` | ${cell(key.type ?? 'object')} | ${defaultText(key)} | ${cell(description ?? '')} |`,
      );
    }
    lines.push('');
  }
  return { text: lines.join('\n'), missing };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { GatewayConfig } = await import(pathToFileURL(join(ROOT, 'dist', 'index.js')).href);
  const { text, missing } = renderConfigDocs(GatewayConfig);
  writeFileSync(CONFIG_DOCS_PATH, text);
  console.log(`wrote ${CONFIG_DOCS_PATH.slice(ROOT.length + 1)}`);
  if (missing.length > 0)
    console.warn(`keys without a description (add a /** … */ comment on the key): ${missing.join(', ')}`);
}
