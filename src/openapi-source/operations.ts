/**
 * The operations of a dereferenced document in one shape, whatever its
 * version: OpenAPI 3.x as written; Swagger 2.0's `in: body` / `in: formData`
 * parameters become the request body, its inline parameter types a schema,
 * its `collectionFormat` a style.
 */
import type { Document } from './document.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface OperationParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  description: string;
  schema: Obj;
  /** Serialisation (OpenAPI 3 `style`): form, spaceDelimited, pipeDelimited, deepObject, simple. */
  style: string;
  explode: boolean;
}

export interface OperationBody {
  /** The media type sent: a JSON one, or application/x-www-form-urlencoded. */
  mediaType: string;
  form: boolean;
  schema: Obj;
  required: boolean;
  description: string;
}

export interface Operation {
  method: string;
  path: string;
  operationId: string | null;
  summary: string;
  description: string;
  tags: string[];
  deprecated: boolean;
  parameters: OperationParameter[];
  body: OperationBody | null;
  /** Why the operation cannot be a tool (e.g. only a multipart body), or null. */
  unsupported: string | null;
  /** It may answer with an event stream (`text/event-stream`, or no answer documented): read as a stream. */
  streams: boolean;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const isJson = (type: string) => /^application\/([\w.+-]*\+)?json$/i.test(type.split(';')[0]!.trim()) || type === '*/*';

export function operationsOf(doc: Document): Operation[] {
  const swagger2 = doc.swagger === '2.0';
  const paths = isObj(doc.paths) ? doc.paths : {};
  const out: Operation[] = [];
  for (const [path, rawItem] of Object.entries(paths)) {
    if (!isObj(rawItem)) continue;
    const shared = Array.isArray(rawItem.parameters) ? rawItem.parameters.filter(isObj) : [];
    for (const method of HTTP_METHODS) {
      const op = rawItem[method];
      if (!isObj(op)) continue;
      // An operation's own parameter overrides a path-level one of the same name and location.
      const own = Array.isArray(op.parameters) ? op.parameters.filter(isObj) : [];
      const key = (p: Obj) => `${str(p.in)}:${str(p.name)}`;
      const ownKeys = new Set(own.map(key));
      const raw = [...shared.filter((p) => !ownKeys.has(key(p))), ...own];
      const operation: Operation = {
        method: method.toUpperCase(),
        path,
        operationId: str(op.operationId) || null,
        summary: str(op.summary),
        description: str(op.description),
        tags: Array.isArray(op.tags) ? op.tags.filter((t): t is string => typeof t === 'string') : [],
        deprecated: op.deprecated === true,
        parameters: [],
        body: null,
        unsupported: null,
        streams: mayStream(op),
      };
      if (swagger2) swagger2Parts(doc, op, raw, operation);
      else openapi3Parts(op, raw, operation);
      out.push(operation);
    }
  }
  return out;
}

function openapi3Parts(op: Obj, raw: Obj[], operation: Operation): void {
  for (const p of raw) {
    const where = str(p.in);
    if (where !== 'path' && where !== 'query' && where !== 'header' && where !== 'cookie') continue;
    const style = str(p.style) || (where === 'query' || where === 'cookie' ? 'form' : 'simple');
    operation.parameters.push({
      name: str(p.name),
      in: where,
      required: where === 'path' || p.required === true,
      description: str(p.description),
      schema: isObj(p.schema) ? p.schema : isObj(p.content) ? firstSchema(p.content) : {},
      style,
      explode: typeof p.explode === 'boolean' ? p.explode : style === 'form',
    });
  }
  const body = isObj(op.requestBody) ? op.requestBody : null;
  const content = body && isObj(body.content) ? body.content : null;
  if (!body || !content || Object.keys(content).length === 0) return;
  const types = Object.keys(content);
  const json = types.find(isJson);
  const form = types.find((t) => t.toLowerCase().startsWith('application/x-www-form-urlencoded'));
  const chosen = json ?? form;
  if (!chosen) {
    operation.unsupported = `its request body is only ${types.join(', ')}; JSON and form bodies are supported`;
    return;
  }
  const media = content[chosen];
  operation.body = {
    mediaType: chosen === '*/*' ? 'application/json' : chosen,
    form: chosen === form && !json,
    schema: isObj(media) && isObj(media.schema) ? media.schema : {},
    required: body.required === true,
    description: str(body.description),
  };
}

function firstSchema(content: Obj): Obj {
  const first = Object.values(content)[0];
  return isObj(first) && isObj(first.schema) ? first.schema : {};
}

const COLLECTION_STYLES: Record<string, [string, boolean]> = {
  csv: ['form', false],
  ssv: ['spaceDelimited', false],
  pipes: ['pipeDelimited', false],
  tsv: ['tabDelimited', false],
  multi: ['form', true],
};

function swagger2Parts(doc: Document, op: Obj, raw: Obj[], operation: Operation): void {
  const formFields: Obj = {};
  const formRequired: string[] = [];
  for (const p of raw) {
    const where = str(p.in);
    const name = str(p.name);
    if (where === 'body') {
      const consumes = (
        Array.isArray(op.consumes) ? op.consumes : Array.isArray(doc.consumes) ? doc.consumes : []
      ) as string[];
      operation.body = {
        mediaType: consumes.find(isJson) ?? 'application/json',
        form: false,
        schema: isObj(p.schema) ? p.schema : {},
        required: p.required === true,
        description: str(p.description),
      };
      continue;
    }
    const schema = inlineSchema(p);
    if (where === 'formData') {
      if (p.type === 'file') {
        operation.unsupported = 'it uploads a file (multipart); JSON and form bodies are supported';
        return;
      }
      formFields[name] = { ...schema, ...(p.description ? { description: p.description } : {}) };
      if (p.required === true) formRequired.push(name);
      continue;
    }
    if (where !== 'path' && where !== 'query' && where !== 'header') continue;
    const [style, explode] = COLLECTION_STYLES[str(p.collectionFormat) || 'csv'] ?? ['form', false];
    operation.parameters.push({
      name,
      in: where,
      required: where === 'path' || p.required === true,
      description: str(p.description),
      schema,
      style: where === 'query' ? style : 'simple',
      explode,
    });
  }
  if (Object.keys(formFields).length > 0 && operation.body === null) {
    operation.body = {
      mediaType: 'application/x-www-form-urlencoded',
      form: true,
      schema: { type: 'object', properties: formFields, ...(formRequired.length > 0 && { required: formRequired }) },
      required: formRequired.length > 0,
      description: '',
    };
  }
}

/** A Swagger 2.0 non-body parameter's inline type as a schema. */
function inlineSchema(p: Obj): Obj {
  const keys = [
    'type',
    'format',
    'items',
    'enum',
    'default',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'minLength',
    'maxLength',
    'pattern',
    'minItems',
    'maxItems',
    'uniqueItems',
    'multipleOf',
  ];
  const schema: Obj = {};
  for (const k of keys) if (k in p) schema[k] = p[k];
  if (isObj(schema.items)) schema.items = inlineSchema(schema.items);
  return schema;
}

/** Whether an operation's documented answers include an event stream (or document no content types at all). */
function mayStream(op: Obj): boolean {
  const responses = isObj(op.responses) ? Object.values(op.responses).filter(isObj) : [];
  if (Array.isArray(op.produces))
    return op.produces.some((t) => typeof t === 'string' && t.startsWith('text/event-stream'));
  if (responses.length === 0) return true;
  return responses.some(
    (r) => isObj(r.content) && Object.keys(r.content).some((t) => t.startsWith('text/event-stream') || t === '*/*'),
  );
}

/** The API's base URL from the document: OpenAPI 3's first server (variables at their defaults), Swagger 2.0's scheme, host and basePath. */
export function documentBaseUrl(doc: Document, specUrl: URL | null): URL | null {
  if (doc.swagger === '2.0') {
    const schemes = Array.isArray(doc.schemes) ? (doc.schemes as string[]) : [];
    const scheme = schemes.includes('https') ? 'https' : (schemes[0] ?? specUrl?.protocol.slice(0, -1) ?? 'https');
    const host = str(doc.host) || specUrl?.host;
    if (!host) return null;
    return new URL(`${scheme}://${host}${str(doc.basePath)}`);
  }
  const servers = Array.isArray(doc.servers) ? doc.servers.filter(isObj) : [];
  const first = servers[0];
  if (!first || typeof first.url !== 'string') return specUrl ? new URL('/', specUrl) : null;
  let url = first.url;
  if (isObj(first.variables)) {
    for (const [name, v] of Object.entries(first.variables))
      if (isObj(v)) url = url.split(`{${name}}`).join(str(v.default));
  }
  try {
    return specUrl ? new URL(url, specUrl) : new URL(url);
  } catch {
    return null;
  }
}
