/**
 * Reading an OpenAPI document: from a file or an http(s) URL (through the
 * source's own fetch, so the address rules apply), JSON or YAML, at most
 * `maxBytes`, with every internal `$ref` resolved by json-schema-ref-parser.
 * External references are not followed (the document is one file); a cycle
 * is left as a `$ref`, which the tool schemas turn into "any value".
 */
import { open } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { loadPackage } from '../load-package.js';

type RefParserModule = typeof import('@apidevtools/json-schema-ref-parser');
let refParser: Promise<RefParserModule> | undefined;

export type Document = Record<string, unknown>;

/** A loaded document and where it came from (the base of a relative `servers` URL). */
export interface LoadedDocument {
  document: Document;
  /** The spec URL, or null for a file. */
  url: URL | null;
  /** The document's text, to tell a changed document on refresh. */
  text: string;
}

export type FetchText = (url: URL, maxBytes: number) => Promise<{ status: number; text: string }>;

export function isUrl(spec: string): boolean {
  return /^https?:\/\//i.test(spec);
}

export async function loadDocument(spec: string, fetchText: FetchText, maxBytes: number): Promise<LoadedDocument> {
  const url = isUrl(spec) ? new URL(spec) : null;
  let text: string;
  if (url) {
    const answer = await fetchText(url, maxBytes);
    if (answer.status !== 200)
      throw new Error(`GET ${url.host}${url.pathname} answered ${answer.status}; check the spec URL`);
    text = answer.text;
  } else {
    text = await readBounded(spec, maxBytes);
  }
  const document = parseDocument(text);
  const { $RefParser } = await (refParser ??= loadPackage<RefParserModule>('@apidevtools/json-schema-ref-parser'));
  await $RefParser
    .dereference(document, { resolve: { external: false }, dereference: { circular: 'ignore' } })
    .catch((err: unknown) => {
      throw new Error(`its $refs could not be resolved: ${(err as Error).message.split('\n')[0]}`);
    });
  return { document, url, text };
}

async function readBounded(path: string, maxBytes: number): Promise<string> {
  let file;
  try {
    file = await open(path, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? 'the spec file does not exist; check openapi.sources.<id>.spec'
        : `the spec file cannot be read (${code ?? 'error'})`,
    );
  }
  try {
    const { size } = await file.stat();
    if (size > maxBytes)
      throw new Error(`the spec file has ${size} bytes, more than openapi.max_spec_bytes (${maxBytes})`);
    return await file.readFile('utf8');
  } finally {
    await file.close();
  }
}

function parseDocument(text: string): Document {
  let value: unknown;
  try {
    value = text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 1000 });
  } catch (err) {
    throw new Error(`it is neither valid JSON nor valid YAML (${(err as Error).message.split('\n')[0]})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error('it is not an OpenAPI document (not a JSON/YAML object)');
  const doc = value as Document;
  const version = typeof doc.openapi === 'string' ? doc.openapi : doc.swagger === '2.0' ? '2.0' : null;
  if (version === null || !(version === '2.0' || version.startsWith('3.'))) {
    throw new Error('it is not an OpenAPI 3.x or Swagger 2.0 document (no "openapi: 3.x" or "swagger: \'2.0\'" field)');
  }
  return doc;
}
