/**
 * An MCP tool's JSON Schema `inputSchema` as A2E `input_parameters`: types,
 * `required`, `enum`, `description`, nested `properties`. What a
 * ToolParameter cannot say (oneOf, pattern, minimum, …) is not lost: the
 * original schema stays on the definition as `input_schema`, and the engine
 * validates arguments against it (engine/json-schema.ts).
 */
import { PARAMETER_TYPES, type ToolParameter } from '../protocol/index.js';

type Schema = Record<string, unknown>;
type ParameterType = ToolParameter['type'];

const MAX_DEPTH = 8;
const isSchema = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The parameters of an object schema (`inputSchema` is always one). */
export function parametersFromSchema(schema: Schema): ToolParameter[] {
  return objectParameters(schema, schema, 0);
}

function objectParameters(schema: Schema, root: Schema, depth: number): ToolParameter[] {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [],
  );
  return Object.entries(properties).map(([name, raw]) =>
    parameter(name, resolve(raw, root), required.has(name), root, depth),
  );
}

function parameter(name: string, schema: Schema, required: boolean, root: Schema, depth: number): ToolParameter {
  const type = typeOf(schema, root);
  const p: ToolParameter = { name, type, description: describe(schema), required };
  const values = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : undefined;
  if (values && values.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) p.enum = values.map(String);
  if (type === 'object' && isSchema(schema.properties) && depth < MAX_DEPTH) {
    p.properties = Object.fromEntries(objectParameters(schema, root, depth + 1).map((q) => [q.name, q]));
  }
  return p;
}

function describe(schema: Schema): string {
  if (typeof schema.description === 'string') return schema.description;
  if (typeof schema.title === 'string') return schema.title;
  return '';
}

/** The one A2E type for a schema: its `type` (the first non-null one), else the first typed branch of a union. */
function typeOf(schema: Schema, root: Schema, depth = 0): ParameterType {
  const declared = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (typeof declared === 'string' && (PARAMETER_TYPES as readonly string[]).includes(declared))
    return declared as ParameterType;
  const values = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : undefined;
  if (values && values.length > 0) return jsonType(values[0]);
  if (depth < MAX_DEPTH) {
    for (const key of ['anyOf', 'oneOf', 'allOf']) {
      const branches = schema[key];
      if (!Array.isArray(branches)) continue;
      for (const b of branches) {
        if (!isSchema(b)) continue;
        const resolved = resolve(b, root);
        if (resolved.type === 'null') continue;
        return typeOf(resolved, root, depth + 1);
      }
    }
  }
  if (isSchema(schema.properties)) return 'object';
  if (isSchema(schema.items)) return 'array';
  return 'string';
}

function jsonType(v: unknown): ParameterType {
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'boolean') return 'boolean';
  if (Array.isArray(v)) return 'array';
  if (v !== null && typeof v === 'object') return 'object';
  return 'string';
}

/** A local `$ref` ("#/$defs/X", "#/definitions/X") followed, a few levels at most. */
function resolve(raw: unknown, root: Schema): Schema {
  let schema: Schema = isSchema(raw) ? raw : {};
  for (let i = 0; i < MAX_DEPTH && typeof schema.$ref === 'string' && schema.$ref.startsWith('#/'); i++) {
    let target: unknown = root;
    for (const part of schema.$ref.slice(2).split('/')) {
      target = isSchema(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    }
    if (!isSchema(target)) break;
    schema = { ...target, ...(typeof schema.description === 'string' ? { description: schema.description } : {}) };
  }
  return schema;
}
