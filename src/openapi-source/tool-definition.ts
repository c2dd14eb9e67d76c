/**
 * One operation as a tool definition: its arguments are the operation's
 * path, query, header and cookie parameters under their own names (a name
 * used in two places gets its location appended, "id_header") and the
 * request body as `body`. The exact JSON Schema of all of them is the
 * definition's `input_schema` (the engine validates arguments against it
 * before any request leaves); `input_parameters` is its approximation.
 */
import type { ToolDefinitionInput } from '../protocol/index.js';
import { parametersFromSchema } from '../mcp/schema.js';
import type { Operation, OperationParameter } from './operations.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every character outside [A-Za-z0-9_-] becomes "_". */
export const sanitize = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');

/** Headers a parameter may not set: HTTP defines them from the request itself (OpenAPI 3 ignores them too). */
const RESERVED_HEADERS = new Set(['accept', 'content-type', 'authorization', 'content-length', 'host']);
/** Deeper schemas are offered as any value (a generated document can nest without end). */
const MAX_DEPTH = 24;

/** The target of a local `$ref` ("#/components/schemas/X") in the document, or undefined. */
export type RefResolver = (ref: string) => unknown;

/** A resolver of `document`'s local references. */
export function refResolver(document: Obj): RefResolver {
  return (ref) => {
    if (!ref.startsWith('#/')) return undefined;
    let at: unknown = document;
    for (const part of ref.slice(2).split('/'))
      at = isObj(at) ? at[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    return at;
  };
}

/** Where each argument goes. */
export interface ArgumentPlan {
  parameters: { arg: string; parameter: OperationParameter }[];
  /** The argument holding the request body, or null. */
  bodyArg: string | null;
}

export interface OperationTool {
  name: string;
  definition: ToolDefinitionInput;
  operation: Operation;
  plan: ArgumentPlan;
}

/** What the source sets itself, so callers are not offered it. */
export interface HiddenParameters {
  headers: ReadonlySet<string>;
  query: ReadonlySet<string>;
}

export function toolName(sourceId: string, operation: Operation): string {
  const own = operation.operationId ?? `${operation.method.toLowerCase()}_${operation.path}`;
  return `${sanitize(sourceId)}_${sanitize(own).replace(/_+/g, '_').replace(/^_|_$/g, '')}`;
}

export function operationTool(
  sourceId: string,
  name: string,
  operation: Operation,
  hidden: HiddenParameters,
  openapi31: boolean,
  resolve: RefResolver,
): OperationTool {
  const offered = operation.parameters.filter(
    (p) =>
      p.name !== '' &&
      !(
        p.in === 'header' &&
        (RESERVED_HEADERS.has(p.name.toLowerCase()) || hidden.headers.has(p.name.toLowerCase()))
      ) &&
      !(p.in === 'query' && hidden.query.has(p.name)),
  );
  const counts = new Map<string, number>();
  for (const p of offered) counts.set(p.name, (counts.get(p.name) ?? 0) + 1);
  const plan: ArgumentPlan = { parameters: [], bodyArg: null };
  const properties: Obj = {};
  const required: string[] = [];
  for (const p of offered) {
    const arg = counts.get(p.name)! > 1 ? `${p.name}_${p.in}` : p.name;
    plan.parameters.push({ arg, parameter: p });
    properties[arg] = jsonSchema(withDescription(p.schema, p.description || `${p.in} parameter ${p.name}`), resolve);
    if (p.required) required.push(arg);
  }
  if (operation.body) {
    const arg = properties.body === undefined ? 'body' : 'request_body';
    plan.bodyArg = arg;
    properties[arg] = jsonSchema(
      withDescription(
        operation.body.schema,
        operation.body.description || `Request body (${operation.body.mediaType})`,
      ),
      resolve,
    );
    if (operation.body.required) required.push(arg);
  }
  const inputSchema: Obj = {
    ...(openapi31 && { $schema: 'https://json-schema.org/draft/2020-12/schema' }),
    type: 'object',
    properties,
    ...(required.length > 0 && { required }),
    additionalProperties: false,
  };
  const method = operation.method;
  const description =
    [operation.summary, operation.description].filter(Boolean).join('\n\n') || `${method} ${operation.path}`;
  const definition: ToolDefinitionInput = {
    name,
    description: `${description}\n\n(${method} ${operation.path} of the OpenAPI source "${sourceId}")`,
    input_parameters: parametersFromSchema(inputSchema),
    input_schema: inputSchema,
    output_parameters: [
      { name: 'status', type: 'integer', description: 'HTTP status code' },
      { name: 'headers', type: 'object', description: 'A safe subset of the response headers (lower-case names)' },
      {
        name: 'body',
        type: 'string',
        description:
          'The response body: parsed JSON, text, base64 (binary) or, for an event stream, the list of events',
      },
      { name: 'truncated', type: 'boolean', description: 'True when the body was cut at max_response_bytes' },
    ],
    streaming: true,
    idempotent:
      method === 'GET' || method === 'HEAD' || method === 'PUT' || method === 'DELETE' || method === 'OPTIONS',
    tags: [...new Set([...operation.tags, 'openapi'])],
    toolkit: sourceId,
    kind: 'openapi',
    defer_loading: operation.deprecated,
    mcp: {
      annotations: {
        readOnlyHint: method === 'GET' || method === 'HEAD',
        destructiveHint: method === 'DELETE',
        idempotentHint: method !== 'POST' && method !== 'PATCH',
        openWorldHint: true,
      },
    },
  };
  return { name, definition, operation, plan };
}

/** `schema` with `description` when it has none (a `$ref` keeps its target's, when that has one). */
function withDescription(schema: Obj, description: string): Obj {
  return schema.description || typeof schema.$ref === 'string' ? schema : { ...schema, description };
}

/**
 * An OpenAPI schema as a plain JSON Schema a validator compiles: a `$ref` left by a cycle becomes any value,
 * OpenAPI 3.0's `nullable` a null type, its boolean `exclusiveMinimum`/`exclusiveMaximum` the numeric form,
 * a `format` noted in the description; `discriminator`, `xml`, `example` and friends dropped. A copy.
 */
export function jsonSchema(schema: unknown, resolve: RefResolver, depth = 0, seen: Set<unknown> = new Set()): Obj {
  if (!isObj(schema)) return {};
  // A `$ref` the dereferencer left is a cycle: followed once, then any value where it comes round again.
  if (typeof schema.$ref === 'string' && !seen.has(schema.$ref)) {
    const target = resolve(schema.$ref);
    if (isObj(target)) {
      seen.add(schema.$ref);
      const out = jsonSchema(target, resolve, depth, seen);
      seen.delete(schema.$ref);
      return out;
    }
  }
  if (typeof schema.$ref === 'string' || depth > MAX_DEPTH || seen.has(schema)) {
    const of = typeof schema.$ref === 'string' ? ` (${schema.$ref.split('/').pop()}, recursive)` : ' (recursive)';
    return { description: `Any JSON value${of}` };
  }
  seen.add(schema);
  const out: Obj = {};
  for (const [key, value] of Object.entries(schema)) {
    if (
      key === 'discriminator' ||
      key === 'xml' ||
      key === 'example' ||
      key === 'externalDocs' ||
      key === 'nullable' ||
      key.startsWith('x-')
    )
      continue;
    if (key === 'readOnly' || key === 'writeOnly') continue;
    if (key === 'properties' || key === 'patternProperties' || key === '$defs' || key === 'definitions') {
      if (isObj(value))
        out[key] = Object.fromEntries(
          Object.entries(value).map(([k, v]) => [k, jsonSchema(v, resolve, depth + 1, seen)]),
        );
    } else if (
      key === 'items' ||
      key === 'additionalProperties' ||
      key === 'not' ||
      key === 'contains' ||
      key === 'propertyNames' ||
      key === 'if' ||
      key === 'then' ||
      key === 'else'
    ) {
      out[key] = isObj(value) ? jsonSchema(value, resolve, depth + 1, seen) : value;
    } else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf' || key === 'prefixItems') {
      out[key] = Array.isArray(value) ? value.map((v) => jsonSchema(v, resolve, depth + 1, seen)) : value;
    } else {
      out[key] = value;
    }
  }
  seen.delete(schema);
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof out[flag] === 'boolean') {
      if (out[flag] === true && typeof out[bound] === 'number') {
        out[flag] = out[bound];
        delete out[bound];
      } else delete out[flag];
    }
  }
  if (
    typeof out.format === 'string' &&
    !(typeof out.description === 'string' && out.description.includes(out.format))
  ) {
    out.description = `${typeof out.description === 'string' && out.description ? `${out.description} ` : ''}(format: ${out.format})`;
  }
  return out;
}
