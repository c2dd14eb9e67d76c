/**
 * GET /admin/workspaces and DELETE /admin/workspaces/{name}: the native tools' workspaces (one per principal when
 * tools.fs.root ends in {principal}; docs/tenants.md) with their disk usage, and deleting one. Admin views: with auth
 * on they need a token with `admin: true`, since they show every principal's workspace.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { GatewayError } from '../../engine/index.js';
import { ErrorMessage } from '../../protocol/index.js';
import type { AdminCheck } from '../http/admin.js';
import { jsonResponse } from '../http/respond.js';

const WorkspaceUsage = z
  .object({
    name: z.string().meta({
      description: 'Directory name: a readable part of the principal plus a digest of it ("anonymous" without auth)',
    }),
    principal: z
      .string()
      .nullable()
      .meta({ description: 'The principal, when one of its calls opened the workspace on this instance; else null' }),
    bytes: z.int().meta({ description: 'Disk bytes it holds (like du)' }),
    quota_bytes: z
      .int()
      .nullable()
      .meta({ description: 'Its quota, when known on this instance (null: none or not known here)' }),
    last_used: z.string().meta({ description: 'When a call last used it (to within seconds), ISO 8601' }),
  })
  .meta({ id: 'WorkspaceUsage', description: 'One workspace and its usage' });

const WorkspacesResponse = z
  .object({
    per_principal: z
      .boolean()
      .meta({ description: 'Whether each principal has its own workspace (tools.fs.root ends in {principal})' }),
    workspaces: z.array(WorkspaceUsage),
  })
  .meta({ id: 'WorkspacesResponse', description: 'The workspaces of the file tools and run_command' });

/** What the routes need of the workspaces (src/tools/fs/workspaces.ts). */
export interface WorkspaceAdmin {
  readonly perPrincipal: boolean;
  list(): Promise<z.input<typeof WorkspaceUsage>[]>;
  remove(name: string): Promise<boolean>;
}

export const workspacesRoute = createRoute({
  method: 'get',
  path: '/admin/workspaces',
  operationId: 'listWorkspaces',
  tags: ['meta'],
  summary: 'The workspaces and their disk usage',
  description:
    'Each workspace of the file tools and run_command with its disk usage and last use: one per principal when tools.fs.root ' +
    'ends in {principal}, else the shared one. With auth configured, only tokens with `admin: true` may read it (others get 403).',
  responses: {
    200: {
      description: 'The workspaces',
      content: {
        'application/json': {
          schema: WorkspacesResponse,
          example: {
            per_principal: true,
            workspaces: [
              {
                name: 'ci-3f5a9c0d1e2b4a67',
                principal: 'ci',
                bytes: 81920,
                quota_bytes: 1073741824,
                last_used: '2024-05-19T12:00:00.000Z',
              },
            ],
          },
        },
      },
    },
    503: {
      description: 'Neither the file tools nor run_command is enabled (`unavailable`)',
      content: { 'application/json': { schema: ErrorMessage } },
    },
  },
});

export const deleteWorkspaceRoute = createRoute({
  method: 'delete',
  path: '/admin/workspaces/{name}',
  operationId: 'deleteWorkspace',
  tags: ['meta'],
  summary: "Delete a principal's workspace and everything in it",
  description:
    'Its calls running now lose it; its next call starts with an empty one. Other instances sharing the directory notice ' +
    'within seconds. Only with one workspace per principal; with auth configured, only tokens with `admin: true` may delete.',
  request: { params: z.object({ name: z.string().meta({ description: 'The `name` GET /admin/workspaces lists' }) }) },
  responses: {
    200: {
      description: 'Deleted',
      content: {
        'application/json': { schema: z.object({ deleted: z.string() }), example: { deleted: 'ci-3f5a9c0d1e2b4a67' } },
      },
    },
    400: {
      description: 'The workspace is shared, not per principal (`invalid_request`)',
      content: { 'application/json': { schema: ErrorMessage } },
    },
    404: {
      description: 'No workspace by that name (`not_found`)',
      content: { 'application/json': { schema: ErrorMessage } },
    },
  },
});

export function registerWorkspacesRoutes(
  app: OpenAPIHono,
  deps: { workspaces: () => WorkspaceAdmin | undefined; admin: AdminCheck },
): void {
  const workspaces = (): WorkspaceAdmin => {
    const w = deps.workspaces();
    if (!w)
      throw new GatewayError('unavailable', 'there are no workspaces: tools.fs and tools.shell are both disabled');
    return w;
  };
  app.openAPIRegistry.registerPath(workspacesRoute);
  app.get(workspacesRoute.path, async (c) => {
    deps.admin(c, 'GET /admin/workspaces');
    const w = workspaces();
    return jsonResponse(c, { per_principal: w.perPrincipal, workspaces: await w.list() });
  });
  app.openAPIRegistry.registerPath(deleteWorkspaceRoute);
  app.delete('/admin/workspaces/:name', async (c) => {
    deps.admin(c, 'DELETE /admin/workspaces');
    const w = workspaces();
    const name = c.req.param('name') ?? '';
    if (!w.perPrincipal) {
      throw new GatewayError(
        'invalid_request',
        'the workspace is shared by every caller (tools.fs.root has no {principal}); there is no per-principal workspace to delete',
      );
    }
    if (!(await w.remove(name)))
      throw new GatewayError(
        'not_found',
        `no workspace named ${JSON.stringify(name.slice(0, 80))}; GET /admin/workspaces lists them`,
      );
    return jsonResponse(c, { deleted: name });
  });
}
