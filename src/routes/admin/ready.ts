/**
 * GET /readyz: readiness, for load balancers and orchestrators. 200 once
 * everything the gateway loads at start has loaded (plugins before it listens;
 * A2A agents may still be fetching their cards after that, and the shell
 * sandbox is checked after it with tools.shell.enabled: auto), 503 `unavailable`
 * with what is still pending before then and while it shuts down. GET /healthz stays
 * liveness: 200 as long as the process serves.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { z } from 'zod';
import { GatewayError } from '../../engine/index.js';
import { ErrorMessage, type AgentStatus } from '../../protocol/index.js';
import { UnavailableToolStatus } from '../pages/docs.js';
import { errorResponse } from '../http/errors.js';
import { jsonResponse } from '../http/respond.js';

export const Readiness = z
  .object({
    status: z.literal('ready'),
    unavailable_tools: z.array(UnavailableToolStatus).optional().meta({
      description:
        'Ready, but without these tools on this host (e.g. run_command without a sandbox), and why; absent when none',
    }),
  })
  .meta({ id: 'Readiness' });

const NOT_READY_EXAMPLE = {
  type: 'error',
  id: 'e1f2a3',
  version: '1.0',
  ts: 1716123456.789,
  req_id: '',
  capability_name: '',
  code: 'unavailable',
  message: 'not ready: 1 A2A agent is still loading its card (GET /agents has details); retry shortly',
  detail: {
    status: 'starting',
    pending: ['1 A2A agent is still loading its card (GET /agents has details)'],
    retry_after_s: 1,
  },
  retryable: true,
};

export const readyRoute = createRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'ready',
  tags: ['meta'],
  summary: 'Readiness: 200 once plugins and A2A agents have loaded',
  responses: {
    200: {
      description: 'Ready to serve calls',
      content: { 'application/json': { schema: Readiness, example: { status: 'ready' } } },
    },
    503: {
      description:
        'Not ready (`unavailable`): still starting or shutting down; `detail.status` is `starting` or `stopping` and ' +
        '`detail.pending` says what it waits for',
      content: { 'application/json': { schema: ErrorMessage, example: NOT_READY_EXAMPLE } },
    },
  },
});

export interface ReadyDeps {
  agents: () => AgentStatus[];
  /** What plugins are still checking after the gateway started listening (the shell sandbox). */
  loading?: () => string[];
  /** Tools a plugin cannot offer on this host, and why (ToolPlugin.unavailableTools). */
  unavailable?: () => Array<{ name: string; reason: string }>;
  /** True once the gateway is shutting down. */
  stopping: () => boolean;
}

const notReady = (status: 'starting' | 'stopping', pending: string[]) =>
  new GatewayError('unavailable', `not ready: ${pending.join('; ')}; retry shortly`, {
    detail: { status, pending, retry_after_s: 1 },
    retryable: true,
  });

export function registerReadyRoute(app: OpenAPIHono, deps: ReadyDeps): void {
  app.openAPIRegistry.registerPath(readyRoute);
  app.get(readyRoute.path, (c) => {
    if (deps.stopping()) return errorResponse(c, notReady('stopping', ['the gateway is shutting down']));
    const pending = deps.loading?.() ?? [];
    const loading = deps.agents().filter((a) => a.state === 'loading').length;
    if (loading > 0) {
      const them =
        loading === 1 ? '1 A2A agent is still loading its card' : `${loading} A2A agents are still loading their cards`;
      pending.push(`${them} (GET /agents has details)`);
    }
    if (pending.length === 0) {
      const unavailable = deps.unavailable?.() ?? [];
      return jsonResponse(
        c,
        unavailable.length > 0 ? { status: 'ready', unavailable_tools: unavailable } : { status: 'ready' },
      );
    }
    return errorResponse(c, notReady('starting', pending));
  });
}
