/** Assembles the HTTP app: routes, error mapping, the OpenAPI document. */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ANONYMOUS, GatewayError, type Caller, type Engine, type Logger } from '../engine/index.js';
import { registerDocsRoutes } from './docs.js';
import { asGatewayError, errorResponse } from './errors.js';
import { registerToolRoutes } from './tools.js';

export interface AppOptions {
  engine: Engine;
  logger: Logger;
  bodyLimitBytes: number;
  heartbeatS: number;
  /** Gateway version, shown in the OpenAPI document. */
  version: string;
  caller?: (c: Context) => Caller;
}

export function createApp(options: AppOptions): OpenAPIHono {
  const app = new OpenAPIHono();
  const { logger } = options;

  app.onError((err, c) => {
    const gatewayError = asGatewayError(err);
    if (gatewayError.code === 'internal') logger.error({ err, path: c.req.path }, 'unhandled error');
    return errorResponse(c, gatewayError);
  });

  app.notFound((c) => {
    const routes = app.routes.filter((r) => r.path === c.req.path && r.method !== 'ALL');
    if (routes.length > 0) {
      const allowed = [...new Set(routes.map((r) => r.method))].join(', ');
      return errorResponse(
        c,
        new GatewayError('method_not_allowed', `${c.req.method} is not supported on ${c.req.path}; use ${allowed}`, {
          detail: { allow: allowed },
        }),
      );
    }
    return errorResponse(
      c,
      new GatewayError('not_found', `no route ${c.req.method} ${c.req.path}; GET /openapi.json lists the routes`),
    );
  });

  registerToolRoutes(app, {
    engine: options.engine,
    logger,
    bodyLimitBytes: options.bodyLimitBytes,
    heartbeatS: options.heartbeatS,
    caller: options.caller ?? (() => ANONYMOUS),
  });

  let document: unknown;
  registerDocsRoutes(app, {
    engine: options.engine,
    document: () => (document ??= openApiDocument(app, options.version)),
  });
  return app;
}

export function openApiDocument(app: OpenAPIHono, version: string): ReturnType<OpenAPIHono['getOpenAPI31Document']> {
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'a2e-gateway',
      version,
      description:
        'A tool gateway for AI agents: the A2E "tools" capability over HTTP. List and search tools, call them, ' +
        'and stream their events (progress, status, artifact, log) as Server-Sent Events.',
    },
    servers: [{ url: '/', description: 'This gateway' }],
    tags: [
      { name: 'tools', description: 'The A2E tools capability' },
      { name: 'meta', description: 'Health and documentation' },
    ],
  });
}
