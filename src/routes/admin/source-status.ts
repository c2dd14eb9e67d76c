/**
 * The status views of the remote tool sources (GET /agents, GET /mcp-servers):
 * one list of the configured sources' current state, in configuration order.
 * They show every source's tools, URLs and commands whatever a token's allow
 * list says, so with auth on only admin tokens may read them.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { z } from 'zod';
import type { AdminCheck } from '../http/admin.js';
import { jsonResponse } from '../http/respond.js';

export interface SourceStatusRoute<K extends string, T> {
  path: `/${string}`;
  operationId: string;
  tag: string;
  summary: string;
  /** The response's one field: the list of sources. */
  key: K;
  schema: z.ZodType<{ [k in K]: T[] }>;
  /** Says what the list holds (the 200 response's description). */
  listDescription: string;
  example: { [k in K]: T[] };
}

/** The OpenAPI spec of one status view. */
export function sourceStatusRoute<K extends string, T>(spec: SourceStatusRoute<K, T>) {
  return createRoute({
    method: 'get',
    path: spec.path,
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: 'With auth configured, only tokens with `admin: true` may read it (others get 403).',
    responses: {
      200: {
        description: spec.listDescription,
        content: { 'application/json': { schema: spec.schema, example: spec.example } },
      },
    },
  });
}

/** Serve a status view: `{ [key]: list() }`, admin-only with auth. */
export function registerSourceStatusRoute<T>(
  app: OpenAPIHono,
  route: ReturnType<typeof sourceStatusRoute>,
  key: string,
  deps: { list: () => T[]; admin?: AdminCheck },
): void {
  app.openAPIRegistry.registerPath(route);
  const what = `GET ${route.path}`;
  app.get(route.path, (c) => {
    deps.admin?.(c, what);
    return jsonResponse(c, { [key]: deps.list() });
  });
}
