/**
 * POST /admin/reload: re-read the config file, as SIGHUP does. Like the
 * other admin views it needs a token with `admin: true` when auth is on.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { GatewayError } from '../../engine/index.js';
import { ErrorMessage } from '../../protocol/index.js';
import { NO_CONFIG_FILE, type ReloadOutcome } from '../../reload/reloader.js';
import type { AdminCheck } from '../http/admin.js';
import { jsonResponse } from '../http/respond.js';

const ReloadResponse = z
  .object({
    status: z.literal('reloaded'),
    changed: z.array(z.string()).meta({ description: 'Config keys whose new value is in force for new calls' }),
    restart_needed: z
      .array(z.string())
      .meta({ description: 'Config keys that changed but need a restart; the running value is kept' }),
    sessions_ended: z.int().meta({
      description:
        'Sessions and streams ended because the credential that opened them was removed or changed (a rotated token)',
    }),
  })
  .meta({ id: 'ReloadResponse', description: 'What the reload changed' });

export const reloadRoute = createRoute({
  method: 'post',
  path: '/admin/reload',
  operationId: 'reloadConfig',
  tags: ['meta'],
  summary: 'Re-read the config file (as SIGHUP does)',
  description:
    'Tools, agents, MCP servers, plugins, policy, tokens, limits and the log level take effect for new calls; running calls ' +
    'finish as they started. Keys that cannot change live (host, port, base path, …) are reported in `restart_needed` and kept. ' +
    'An invalid config is refused as a whole (`invalid_request`, the start-up message in `detail.error`) and the running one keeps serving. ' +
    'With auth configured, only tokens with `admin: true` may reload (others get 403).',
  responses: {
    200: {
      description: 'The config was reloaded',
      content: {
        'application/json': {
          schema: ReloadResponse,
          example: {
            status: 'reloaded',
            changed: ['agents.weather', 'tools.shell.enabled'],
            restart_needed: ['server.port'],
            sessions_ended: 0,
          },
        },
      },
    },
    400: {
      description: 'The new config is invalid and was refused (`invalid_request`); the running config keeps serving',
      content: { 'application/json': { schema: ErrorMessage } },
    },
  },
});

export function registerReloadRoute(
  app: OpenAPIHono,
  deps: { reload: ((trigger: string) => Promise<ReloadOutcome>) | undefined; admin: AdminCheck },
): void {
  app.openAPIRegistry.registerPath(reloadRoute);
  app.post(reloadRoute.path, async (c) => {
    deps.admin(c, 'POST /admin/reload');
    const outcome = deps.reload
      ? await deps.reload('POST /admin/reload')
      : ({ status: 'refused', error: NO_CONFIG_FILE } as const);
    if (outcome.status === 'refused') {
      throw new GatewayError(
        'invalid_request',
        `config not reloaded, the running config keeps serving: ${outcome.error}`,
        {
          detail: { error: outcome.error },
        },
      );
    }
    return jsonResponse(c, outcome);
  });
}
