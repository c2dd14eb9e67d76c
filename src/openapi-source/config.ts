/** The `openapi` config section: OpenAPI documents whose operations become tools. */
import { z } from 'zod';
import { CredentialConfig } from '../security/credential-config.js';

const MiB = 1024 * 1024;

/** Which operations of a document become tools. */
const OperationsConfig = z.strictObject({
  /**
   * Operations offered: operationIds, `METHOD /path` globs ("GET /pets/*", "* /admin/**") and `tag:NAME`.
   * When absent, only GET and HEAD operations (an operator opts into writes by listing them).
   */
  include: z.array(z.string().min(1)).optional(),
  /** Operations left out (same forms as `include`); wins over `include`. */
  exclude: z.array(z.string().min(1)).default(() => []),
});

export const OpenApiSourceConfig = z.strictObject({
  /** The OpenAPI document: an http(s) URL or a file path (JSON or YAML; OpenAPI 3.0, 3.1 or Swagger 2.0). */
  spec: z.string().min(1),
  /** Offer this source's tools (a disabled source is listed in GET /sources and not loaded). */
  enabled: z.boolean().default(true),
  /** Where requests go; the document's first `servers` entry (resolved against the spec URL) when absent. */
  base_url: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. "https://api.example.com/v1"' })
    .optional(),
  /** Re-read the document every this many seconds (a changed document changes the tools); never when absent. */
  refresh_s: z.int().positive().optional(),
  operations: OperationsConfig.prefault({}),
  /** The credential the gateway adds to every request to the API (callers never see it). */
  auth: CredentialConfig.optional(),
  /** Longest one request may take, seconds (the call's own timeout still applies). */
  timeout_s: z.number().positive().default(30),
  /** Most bytes of a response body kept; the rest is dropped and the result says truncated. */
  max_response_bytes: z.int().positive().default(MiB),
  /** Fixed extra headers sent with every request (values are never logged or shown). */
  headers: z.record(z.string(), z.string()).default(() => ({})),
  /** The API (and the document) may be on a private address; otherwise tools.http's address rules apply to every connection. */
  allow_private: z.boolean().default(false),
});
export type OpenApiSourceConfig = z.output<typeof OpenApiSourceConfig>;

export const OpenApiConfig = z.strictObject({
  /** Source id (the prefix of its tool names, and its toolkit) → source. */
  sources: z.record(z.string().min(1), OpenApiSourceConfig).default(() => ({})),
  /** Longest the gateway waits for the documents at start before it listens, ms; slower ones join when loaded. */
  start_wait_ms: z.int().min(0).default(5000),
  /** Largest document read, bytes. */
  max_spec_bytes: z
    .int()
    .min(1024)
    .default(10 * MiB),
});
export type OpenApiConfig = z.output<typeof OpenApiConfig>;
