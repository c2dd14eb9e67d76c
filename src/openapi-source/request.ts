/**
 * A call's arguments as the HTTP request the operation describes: path
 * parameters percent-encoded, query parameters in their `style`/`explode`,
 * headers and cookies as text, the body as JSON or as a form. The arguments
 * have been validated against the tool's schema already.
 */
import type { OperationTool } from './tool-definition.js';

export interface BuiltRequest {
  method: string;
  /** The operation's path template ("/items/{id}"): what a trace shows, never the filled-in path. */
  route: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
}

const enc = encodeURIComponent;
const text = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);

export function buildRequest(
  base: URL,
  tool: OperationTool,
  args: Record<string, unknown>,
  fixedHeaders: Record<string, string>,
): BuiltRequest {
  const { operation, plan } = tool;
  let path = operation.path;
  const query: string[] = [];
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const { arg, parameter: p } of plan.parameters) {
    const value = args[arg];
    if (value === undefined || value === null) continue;
    switch (p.in) {
      case 'path':
        path = path.split(`{${p.name}}`).join(simple(value, p.explode));
        break;
      case 'query':
        query.push(...queryPairs(p.name, value, p.style, p.explode));
        break;
      case 'header':
        headers[p.name.toLowerCase()] = Array.isArray(value) ? value.map(text).join(',') : text(value);
        break;
      case 'cookie':
        cookies.push(`${p.name}=${enc(Array.isArray(value) ? value.map(text).join(',') : text(value))}`);
        break;
    }
  }
  if (cookies.length > 0) headers.cookie = cookies.join('; ');
  // The base URL's own path prefixes the operation's ("https://api.example.com/v1" + "/pets"); one parse.
  const prefix = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  const search = [...(base.search ? [base.search.slice(1)] : []), ...query].join('&');
  const url = new URL(
    `${base.origin}${prefix}${path.startsWith('/') ? path : `/${path}`}${search ? `?${search}` : ''}`,
  );
  for (const [name, value] of Object.entries(fixedHeaders)) headers[name.toLowerCase()] = value;
  let body: string | undefined;
  const bodyArg = plan.bodyArg === null ? undefined : args[plan.bodyArg];
  if (operation.body && bodyArg !== undefined) {
    headers['content-type'] = operation.body.mediaType;
    body = operation.body.form ? formBody(bodyArg) : JSON.stringify(bodyArg);
  }
  headers.accept ??= 'application/json, text/event-stream;q=0.9, */*;q=0.8';
  return { method: operation.method, route: operation.path, url, headers, body };
}

/** A path parameter (style simple): arrays comma-joined, objects as k,v pairs (k=v with explode); each part percent-encoded. */
function simple(value: unknown, explode: boolean): string {
  if (Array.isArray(value)) return value.map((v) => enc(text(v))).join(',');
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.map(([k, v]) => (explode ? `${enc(k)}=${enc(text(v))}` : `${enc(k)},${enc(text(v))}`)).join(',');
  }
  return enc(text(value));
}

function queryPairs(name: string, value: unknown, style: string, explode: boolean): string[] {
  if (Array.isArray(value)) {
    if (explode && style === 'form') return value.map((v) => `${enc(name)}=${enc(text(v))}`);
    const sep =
      style === 'spaceDelimited' ? '%20' : style === 'pipeDelimited' ? '|' : style === 'tabDelimited' ? '%09' : ',';
    return [`${enc(name)}=${value.map((v) => enc(text(v))).join(sep)}`];
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (style === 'deepObject') return entries.map(([k, v]) => `${enc(name)}%5B${enc(k)}%5D=${enc(text(v))}`);
    if (explode) return entries.map(([k, v]) => `${enc(k)}=${enc(text(v))}`);
    return [`${enc(name)}=${entries.map(([k, v]) => `${enc(k)},${enc(text(v))}`).join(',')}`];
  }
  return [`${enc(name)}=${enc(text(value))}`];
}

/** An object as application/x-www-form-urlencoded: arrays repeated, nested objects as JSON. */
function formBody(value: unknown): string {
  const form = new URLSearchParams();
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined || v === null) continue;
      if (Array.isArray(v)) for (const item of v) form.append(k, text(item));
      else form.append(k, text(v));
    }
  }
  return form.toString();
}
