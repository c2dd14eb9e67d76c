/** Assembles the HTTP app: the middleware, error mapping and not-found answer, then every route group of table.ts. */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { GatewayError, SessionManager, type Caller } from '../engine/index.js';
import { admitCaller, findCaller, resolveCaller } from '../security/access.js';
import { tracingOn } from '../observability/tracing.js';
import type { AppOptions } from './app-options.js';
import { adminCheck } from './http/admin.js';
import { signedCallAccess } from './http/call-access.js';
import { asGatewayError, errorResponse } from './http/errors.js';
import { guardCheck } from './http/guard.js';
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from './http/limits.js';
import { proxyTrust } from './http/proxy-trust.js';
import { runAroundRoutes } from './http/around-routes.js';
import { requestLogger, requestSteps, type RequestContextOptions } from './http/request.js';
import { traceRequests } from './http/trace.js';
import { buildDocument, type OpenApiDocument } from './openapi/document.js';
import { ROUTE_TABLE, type RouteContext } from './table.js';

export type { AppOptions, AppSecurity } from './app-options.js';

export function createApp(options: AppOptions): OpenAPIHono {
  const basePath = options.basePath ?? '';
  const proxies = proxyTrust(options.trustProxy);
  // Routes are declared without the base path (so is the OpenAPI document); Hono serves them under it.
  const app = basePath ? new OpenAPIHono().basePath(basePath) : new OpenAPIHono();
  const { logger, metrics } = options;
  const limits: HttpLimits = { ...DEFAULT_HTTP_LIMITS, ...options.limits };

  const onError = (err: Error, c: Context) => {
    const gatewayError = asGatewayError(err);
    if (gatewayError.code === 'internal') requestLogger(c, logger).error({ err, path: c.req.path }, 'unhandled error');
    return errorResponse(c, gatewayError);
  };
  app.onError(onError);

  const security = options.security;
  const sessions = security?.sessions ?? new SessionManager({ ttlS: 3600, maxParallel: 0 });
  // One step for every request: its id and logger, then the guard's checks. Without tracing it runs inside each
  // route's handler (around-routes.ts); with tracing on, as a middleware inside the request's span (first, so
  // refused requests have spans too).
  const requestOptions: RequestContextOptions = {
    logger,
    streamOpened: metrics && (() => metrics.streamOpened()),
    principalStreams: security?.streams,
    check: security
      ? guardCheck({
          ...security,
          basePath,
          // A refused POST to a door that starts calls is an audited call attempt (the body is never read).
          onRefused: (c, err, path) => {
            if (c.req.method === 'POST' && (path === '/tool/call' || path === '/tool/calls')) {
              options.engine.recordRefused({ tool_name: '', req_id: c.get('requestId') ?? '', error_code: err.code });
            }
            if (c.req.method === 'POST' && options.a2aServer?.enabled && path === options.a2aServer.path) {
              options.engine.recordRefused({
                tool_name: '',
                req_id: c.get('requestId') ?? '',
                error_code: err.code,
                door: 'a2a',
              });
            }
          },
        })
      : undefined,
  };
  const caller =
    options.caller ??
    (security
      ? (c: Context, sessionId: string) =>
          withCredential(c, resolveCaller(security, c.get('principal')?.name ?? null, sessionId))
      : (_c: Context, sessionId: string) => resolveCaller({ sessions, sessionsRequired: false }, null, sessionId));
  // With sessions in a shared store (store.kind redis), finding a session, and admitting a call, may take a round trip.
  const rules = security ?? { sessions, sessionsRequired: false };
  const sharedCaller = (c: Context, sessionId: string) => {
    const found = findCaller(rules, c.get('principal')?.name ?? null, sessionId);
    return found instanceof Promise ? found.then((caller) => withCredential(c, caller)) : withCredential(c, found);
  };
  const admit =
    options.caller ??
    ((c: Context, sessionId: string) => {
      const admitted = admitCaller(rules, c.get('principal')?.name ?? null, sessionId);
      return admitted instanceof Promise
        ? admitted.then((a) => (withCredential(c, a.caller), a))
        : withCredential(c, admitted);
    });

  const notFound = (c: Context) => {
    const routes = app.routes.filter((r) => r.method !== 'ALL' && routePattern(r.path).test(c.req.path));
    // A route for this very method that answered "not found" (e.g. an unknown docs asset) is a 404, not a 405.
    if (routes.length > 0 && !routes.some((r) => r.method === c.req.method)) {
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
      new GatewayError(
        'not_found',
        `no route ${c.req.method} ${c.req.path}; GET ${basePath}/openapi.json lists the routes`,
      ),
    );
  };
  runAroundRoutes(app, requestSteps(requestOptions), onError, notFound, tracingOn ? traceRequests : undefined);

  const admin = adminCheck(security?.authenticate ? (security.admins ?? new Set()) : undefined);
  const accessKey = options.calls.store.accessKey?.bind(options.calls.store);
  let document: unknown;
  const context: RouteContext = {
    options,
    limits,
    basePath,
    proxies,
    sessions,
    rules,
    caller: sessions.shared && !options.caller ? sharedCaller : caller,
    admit,
    admin,
    callAccess: security?.authenticate ? signedCallAccess(accessKey, security.credentialLive) : undefined,
    document: () => (document ??= openApiDocument(app, options.version, basePath)),
  };
  for (const group of ROUTE_TABLE) group.register?.(app, context);
  return app;
}

export function openApiDocument(app: OpenAPIHono, version: string, basePath = ''): OpenApiDocument {
  return buildDocument(app.openAPIRegistry, version, basePath);
}

/** A Hono route path ("/tool/calls/:id") as a regex matching concrete paths. */
function routePattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/** Bind a REST caller to the credential the request authenticated with: the calls it starts belong to that credential. */
function withCredential(c: Context, caller: Caller): Caller {
  const credential = c.get('principal')?.credential;
  if (credential !== undefined) caller.credential = credential;
  return caller;
}
