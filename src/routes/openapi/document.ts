/**
 * Document-wide parts of the OpenAPI contract, applied to every operation
 * after the routes are registered, so routes added later get them too:
 * the license, bearer auth, the `X-Request-Id` header on every request and
 * response, and error responses that are always A2E `Error`s with an example.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { ERROR_CODES, type ErrorCode } from '../../protocol/index.js';
import { STATUS_BY_CODE } from '../http/errors.js';
import { REQUEST_ID_HEADER } from '../http/request.js';

type Json = Record<string, unknown>;
interface Operation extends Json {
  parameters?: Json[];
  responses?: Record<string, Json>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ERROR_REF = '#/components/schemas/Error';

const errorExample = (code: string, message: string, path: string) => ({
  type: 'error',
  id: '8d0f3c2e-6a1b-4c1d-9e57-0b1f7d2a9c44',
  version: '1.0',
  ts: 1716123457.1,
  req_id: 'g7h8i9',
  capability_name: path.startsWith('/tool/') ? 'tools' : '',
  code,
  message,
  detail: {},
  retryable: code === 'unavailable' || code === 'rate_limited' || code === 'internal',
});

/** The error code an error response documents: the first known code in backticks in its description, else by status. */
function codeFor(status: string, description: unknown): string {
  const named = [...String(description ?? '').matchAll(/`([a-z_]+)`/g)]
    .map((m) => m[1])
    .find((c) => (ERROR_CODES as readonly string[]).includes(c!));
  if (named) return named;
  const byStatus = (Object.entries(STATUS_BY_CODE) as [ErrorCode, number][]).find(([, s]) => String(s) === status);
  return byStatus ? byStatus[0] : 'invalid_request';
}

const jsonError = (description: string, code: string, path: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: ERROR_REF }, example: errorExample(code, description, path) } },
});

export function finishDocument<D extends object>(document: D): D {
  const doc = document as Json & { info: Json; components?: Json; paths?: Record<string, Record<string, Operation>> };
  doc.info.license ??= { name: 'MIT', identifier: 'MIT' };
  const components = (doc.components ??= {}) as Record<string, Json>;
  (components.securitySchemes ??= {}).bearerAuth ??= {
    type: 'http',
    scheme: 'bearer',
    description: 'A token from the `auth` config section; needed only when the gateway is configured to require one',
  };
  // `{}` first: without auth configured, no token is needed.
  doc.security ??= [{}, { bearerAuth: [] }];
  (components.parameters ??= {}).RequestId = {
    name: REQUEST_ID_HEADER,
    in: 'header',
    required: false,
    description:
      'Your id for this request (1–128 characters of A-Z a-z 0-9 . _ -), echoed back and written on every log line; ' +
      'a new one is generated when it is missing or not of that form',
    // No example: Swagger UI would send it on every "Try it out", the same id for every request.
    schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
  };
  (components.headers ??= {}).RequestId = {
    description: 'The request id: yours when valid, otherwise generated',
    schema: { type: 'string' },
  };

  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = (op.parameters ??= []);
      if (!params.some((p) => p.$ref === '#/components/parameters/RequestId'))
        params.push({ $ref: '#/components/parameters/RequestId' });
      const responses = (op.responses ??= {});
      if (!Object.keys(responses).some((s) => s.startsWith('4'))) {
        responses['4XX'] = jsonError(
          'A client error, e.g. `unauthorized` (401) when the gateway requires a token or `rate_limited` (429)',
          'unauthorized',
          path,
        );
      }
      responses['500'] ??= jsonError('Unexpected gateway error (`internal`)', 'internal', path);
      for (const [status, response] of Object.entries(responses)) {
        (response.headers as Json | undefined) ??= {};
        (response.headers as Json)[REQUEST_ID_HEADER] = { $ref: '#/components/headers/RequestId' };
        const json = (response.content as Record<string, Json> | undefined)?.['application/json'];
        if (json && (json.schema as Json | undefined)?.$ref === ERROR_REF && json.example === undefined) {
          json.example = errorExample(codeFor(status, response.description), String(response.description), path);
        }
      }
    }
  }
  return document;
}

export type OpenApiDocument = ReturnType<OpenAPIHono['getOpenAPI31Document']>;
type Registry = OpenAPIHono['openAPIRegistry'];

/** The whole document of the routes in `registry`: info, tags, `servers` from the base path, then finishDocument. */
export function buildDocument(registry: Registry, version: string, basePath = ''): OpenApiDocument {
  // Generate from the routes as declared (paths without the base path); the base path goes in `servers`.
  const generator = new OpenAPIHono();
  generator.openAPIRegistry = registry;
  const document = generator.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'a2e-gateway',
      version,
      description:
        'A tool gateway for AI agents: the A2E "tools" capability over HTTP. List and search tools, call them, ' +
        'and stream their events (progress, status, artifact, log) as Server-Sent Events.',
    },
    servers: [{ url: basePath || '/', description: 'This gateway' }],
    tags: [
      { name: 'tools', description: 'The A2E tools capability' },
      { name: 'agents', description: 'Remote A2A agents whose skills are tools' },
      { name: 'sessions', description: 'Handshake and sessions' },
      {
        name: 'a2e-transport',
        description: "A2E's own HTTP message transport, as the reference A2E SDK's HTTPTransport speaks it",
      },
      { name: 'meta', description: 'Health, metrics and documentation' },
      { name: 'mcp', description: 'The gateway as an MCP server, and the MCP servers whose tools it offers' },
      {
        name: 'sources',
        description:
          'Every tool source (native groups, plugins, A2A agents, MCP servers, OpenAPI documents) in one shape',
      },
    ],
  });
  return finishDocument(document);
}

/** The document of a list of route specs alone (no app, no handlers). */
export function documentOfRoutes(
  routes: readonly Parameters<Registry['registerPath']>[0][],
  version: string,
  basePath = '',
): OpenApiDocument {
  const registry = new OpenAPIHono().openAPIRegistry;
  for (const route of routes) registry.registerPath(route);
  return buildDocument(registry, version, basePath);
}
