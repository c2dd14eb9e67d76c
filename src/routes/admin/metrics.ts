/** GET /metrics: Prometheus text exposition of the gateway's metrics. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { z } from 'zod';
import type { GatewayMetrics } from '../../observability/metrics.js';
import type { AdminCheck } from '../http/admin.js';

const EXAMPLE = [
  '# HELP a2e_tool_calls_total Tool calls by tool, kind and outcome (success, tool_error, or the error code of a refused call)',
  '# TYPE a2e_tool_calls_total counter',
  'a2e_tool_calls_total{tool="read_file",kind="native",outcome="success"} 42',
  '',
].join('\n');

export const metricsRoute = createRoute({
  method: 'get',
  path: '/metrics',
  operationId: 'metrics',
  tags: ['meta'],
  summary: 'Prometheus metrics',
  description:
    'Calls by tool, kind and outcome (`a2e_tool_calls_total`), call durations (`a2e_tool_call_duration_seconds`), ' +
    'calls in flight, open SSE streams, A2A agents by state, and the process metrics of prom-client. ' +
    'With auth configured, only tokens with `admin: true` may read it (others get 403).',
  responses: {
    200: {
      description: 'Metrics in the Prometheus text format (version 0.0.4)',
      content: { 'text/plain': { schema: z.string(), example: EXAMPLE } },
    },
  },
});

export function registerMetricsRoute(app: OpenAPIHono, metrics: GatewayMetrics, admin: AdminCheck = () => {}): void {
  app.openAPIRegistry.registerPath(metricsRoute);
  app.get(metricsRoute.path, async (c) => {
    admin(c, 'GET /metrics');
    const { contentType, body } = await metrics.scrape();
    return c.body(body, 200, { 'Content-Type': contentType });
  });
}
