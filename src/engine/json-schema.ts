/**
 * Argument validation by a tool's own JSON Schema (the `input_schema`
 * extension of a definition, e.g. an MCP server's `inputSchema`): for what
 * `input_parameters` cannot say (`oneOf`, `$ref`, `pattern`, `minimum`, …).
 * Compiled once per tool with Ajv; defaults in the schema are filled in.
 */
import { createRequire } from 'node:module';
import type { Ajv as AjvInstance, ErrorObject, Options } from 'ajv';
import type { ArgumentValidator } from './arguments.js';
import type { Problem } from '../protocol/index.js';

// Ajv is CommonJS with a default export; createRequire keeps its types and works under NodeNext. Loaded on first
// use: most gateways have no tool with a JSON Schema, and every CLI start would pay for it.
const require = createRequire(import.meta.url);

// strict: false — schemas come from elsewhere and may carry keywords Ajv does not know (title, examples, x-…).
const OPTIONS: Options = { strict: false, allErrors: true, useDefaults: true, validateFormats: false };
let instances: { draft7: AjvInstance; draft2019: AjvInstance; draft2020: AjvInstance } | undefined;

function ajvFor(schema: Record<string, unknown>): AjvInstance {
  if (!instances) {
    const { default: Ajv } = require('ajv') as typeof import('ajv');
    const { default: Ajv2019 } = require('ajv/dist/2019.js') as typeof import('ajv/dist/2019.js');
    const { default: Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
    instances = { draft7: new Ajv(OPTIONS), draft2019: new Ajv2019(OPTIONS), draft2020: new Ajv2020(OPTIONS) };
  }
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (dialect.includes('2020-12')) return instances.draft2020;
  if (dialect.includes('2019-09')) return instances.draft2019;
  return instances.draft7;
}

/**
 * Compile `schema` into an argument validator. Throws an Error saying what
 * is wrong when the schema itself is invalid.
 */
export function compileJsonSchema(schema: Record<string, unknown>): ArgumentValidator {
  const ajv = ajvFor(schema);
  const dialect = schema.$schema;
  // Ajv knows the draft-07/2019/2020 meta-schemas by their ids; any other (draft-04, a typo) only names a dialect.
  const own =
    typeof dialect === 'string' && !/draft-07|2019-09|2020-12/.test(dialect)
      ? { ...schema, $schema: undefined }
      : schema;
  let validate: ReturnType<AjvInstance['compile']>;
  try {
    validate = ajv.compile(own);
  } catch (err) {
    throw new Error(`its input JSON Schema is not valid: ${(err as Error).message}`, { cause: err });
  }
  return (args) => {
    if (validate(args)) return { ok: true, value: args };
    return { ok: false, problems: (validate.errors ?? []).map(problemOf) };
  };
}

/** An Ajv error as a Problem: the dotted path under `arguments`, and the message. */
function problemOf(e: ErrorObject): Problem {
  const parts = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (e.keyword === 'required') parts.push(String((e.params as { missingProperty: string }).missingProperty));
  if (e.keyword === 'additionalProperties') {
    const key = String((e.params as { additionalProperty: string }).additionalProperty);
    return { path: ['arguments', ...parts].join('.'), message: `unknown key ${JSON.stringify(key)}; remove it` };
  }
  const path = ['arguments', ...parts].join('.');
  const message = e.keyword === 'required' ? 'required value is missing' : (e.message ?? `fails "${e.keyword}"`);
  return { path, message };
}
