/**
 * The approvals API: GET /admin/approvals (pending calls, filterable), GET /admin/approvals/{id} and
 * POST /admin/approvals/{id} (approve, deny, or approve edited arguments). Only approvers (approvals.approvers)
 * may use it; anyone else gets 403 on every route, whatever the id.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { GatewayError, type Approvals, type ApprovalSummary } from '../../engine/index.js';
import { ErrorMessage } from '../../protocol/index.js';
import type { HttpLimits } from '../http/limits.js';
import { readJson } from '../http/body.js';
import { jsonResponse } from '../http/respond.js';

export const ApprovalView = z
  .object({
    id: z.string().meta({ description: 'Unguessable id of this approval' }),
    call_id: z.string(),
    req_id: z.string(),
    tool_name: z.string(),
    kind: z.string(),
    arguments: z
      .record(z.string(), z.unknown())
      .meta({ description: 'The arguments the caller sent (validated, defaults filled in)' }),
    principal: z.string().nullable().meta({ description: "The caller's token name (auth on), else null" }),
    session_id: z.string(),
    door: z.string().meta({ description: 'The door the call came through: rest, mcp, a2a, a2e, …' }),
    correlation_id: z.string(),
    rule: z.string().meta({ description: 'The config rule that gated the call' }),
    created_at: z.number().meta({ description: 'Unix seconds' }),
    expires_at: z.number().meta({ description: 'Unix seconds; undecided by then, the call ends tool_denied' }),
    age_s: z.number(),
    url: z.string().meta({ description: 'Path of this approval (GET, POST)' }),
  })
  .meta({ id: 'Approval', description: 'A call waiting for a person to approve it' });

const DecisionRequest = z
  .strictObject({
    decision: z.enum(['approve', 'deny']),
    reason: z
      .string()
      .max(2000)
      .optional()
      .meta({ description: 'Shown to the caller when denied; kept in the audit record' }),
    arguments: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'Approve these arguments instead (validated as a call would be; the audit keeps both)' }),
  })
  .meta({ id: 'ApprovalDecision' });

const DecisionResponse = z
  .object({ id: z.string(), decision: z.enum(['approve', 'deny']), call_id: z.string(), edited: z.boolean() })
  .meta({ id: 'ApprovalDecisionResult' });

const approvalExample = {
  id: 'q3V9xk2mT0bW7yLr4sN8aPcE',
  call_id: '0b9e4c1a-3f57-4d2e-8a61-5c7f2d9e1b34',
  req_id: 'g7h8i9',
  tool_name: 'run_command',
  kind: 'shell',
  arguments: { command: 'systemctl restart api' },
  principal: 'deploy-bot',
  session_id: '',
  door: 'rest',
  correlation_id: 'release-42',
  rule: 'kind:shell',
  created_at: 1716123457.1,
  expires_at: 1716124357.1,
  age_s: 12.4,
  url: '/admin/approvals/q3V9xk2mT0bW7yLr4sN8aPcE',
};

const IdParam = z.object({ id: z.string().meta({ description: 'The approval id' }) });
const errors = {
  403: {
    description: 'Not an approver (approvals.approvers), or an approver deciding their own call',
    content: { 'application/json': { schema: ErrorMessage } },
  },
  404: {
    description: 'No pending approval with this id (decided, expired or ended)',
    content: { 'application/json': { schema: ErrorMessage } },
  },
};

export const listApprovalsRoute = createRoute({
  method: 'get',
  path: '/admin/approvals',
  operationId: 'listApprovals',
  tags: ['meta'],
  summary: 'Calls waiting for approval',
  description:
    'Pending approvals, oldest first. Filter with `tool`, `principal`, `door`, `correlation_id`. Approvers only (403 otherwise).',
  request: {
    query: z.object({
      tool: z.string().optional(),
      principal: z.string().optional(),
      door: z.string().optional(),
      correlation_id: z.string().optional(),
    }),
  },
  responses: {
    200: {
      description: 'Pending approvals',
      content: {
        'application/json': {
          schema: z.object({ approvals: z.array(ApprovalView) }),
          example: { approvals: [approvalExample] },
        },
      },
    },
    403: errors[403],
  },
});

export const getApprovalRoute = createRoute({
  method: 'get',
  path: '/admin/approvals/{id}',
  operationId: 'getApproval',
  tags: ['meta'],
  summary: 'One pending approval',
  request: { params: IdParam },
  responses: {
    200: {
      description: 'The approval',
      content: { 'application/json': { schema: ApprovalView, example: approvalExample } },
    },
    ...errors,
  },
});

export const decideApprovalRoute = createRoute({
  method: 'post',
  path: '/admin/approvals/{id}',
  operationId: 'decideApproval',
  tags: ['meta'],
  summary: 'Approve or deny a waiting call',
  description:
    'Approve: the tool runs (with `arguments` when given, validated again; the audit keeps both versions) and its own timeout starts. ' +
    'Deny: the call ends `tool_denied` with "denied by <approver>: <reason>". Nobody decides their own call unless approvals.allow_self.',
  request: {
    params: IdParam,
    body: {
      content: {
        'application/json': {
          schema: DecisionRequest,
          example: { decision: 'deny', reason: 'not during the release freeze' },
        },
      },
      required: true,
    },
  },
  responses: {
    200: {
      description: 'Decided',
      content: {
        'application/json': {
          schema: DecisionResponse,
          example: { id: approvalExample.id, decision: 'deny', call_id: approvalExample.call_id, edited: false },
        },
      },
    },
    ...errors,
    422: {
      description: 'The edited arguments are invalid for the tool; the approval stays pending',
      content: { 'application/json': { schema: ErrorMessage } },
    },
  },
});

export interface ApprovalRouteDeps {
  approvals: Approvals | undefined;
  /** May this principal (null: no auth) decide? */
  isApprover: (principal: string | null) => boolean;
  authOn: boolean;
  limits: HttpLimits;
}

/** What GET shows of a pending approval (the store's summary, its owner left out, with its age). */
export function approvalView(a: ApprovalSummary, now = Date.now() / 1000): z.output<typeof ApprovalView> {
  const { owner: _owner, ...view } = a;
  return { ...view, age_s: Math.max(0, Math.round((now - a.created_at) * 10) / 10) };
}

export function registerApprovalRoutes(app: OpenAPIHono, deps: ApprovalRouteDeps): void {
  const approver = (c: Context, what: string): string | null => {
    const principal = c.get('principal')?.name ?? null;
    if (deps.authOn && !deps.isApprover(principal)) {
      throw new GatewayError(
        'forbidden',
        `${what} needs an approver: a token named in approvals.approvers.names, an admin token, or a JWT matching a rule with approver: true` +
          (principal ? `; token "${principal}" is none of these` : ''),
      );
    }
    return principal;
  };
  const pending = async (id: string) => {
    const found = await deps.approvals?.store.get(id);
    if (!found) {
      throw new GatewayError(
        'not_found',
        'no pending approval with this id: it was decided, expired, or its call ended; GET /admin/approvals lists the pending ones',
      );
    }
    return found;
  };

  app.openAPIRegistry.registerPath(listApprovalsRoute);
  app.get(listApprovalsRoute.path, async (c) => {
    approver(c, 'GET /admin/approvals');
    const q = c.req.query();
    const now = Date.now() / 1000;
    const list = ((await deps.approvals?.store.list()) ?? [])
      .filter((a) => q.tool === undefined || a.tool_name === q.tool)
      .filter((a) => q.principal === undefined || a.principal === q.principal)
      .filter((a) => q.door === undefined || a.door === q.door)
      .filter((a) => q.correlation_id === undefined || a.correlation_id === q.correlation_id)
      .map((a) => approvalView(a, now));
    return jsonResponse(c, { approvals: list });
  });

  app.openAPIRegistry.registerPath(getApprovalRoute);
  app.get('/admin/approvals/:id', async (c) => {
    approver(c, 'GET /admin/approvals/{id}');
    return jsonResponse(c, approvalView(await pending(c.req.param('id'))));
  });

  app.openAPIRegistry.registerPath(decideApprovalRoute);
  app.post('/admin/approvals/:id', async (c) => {
    const who = approver(c, 'POST /admin/approvals/{id}');
    const { value } = await readJson(c, DecisionRequest, deps.limits.bodyLimitBytes, {
      maxDepth: deps.limits.maxJsonDepth,
    });
    if (value.decision === 'deny' && value.arguments !== undefined) {
      throw new GatewayError('invalid_request', '"arguments" edits a call being approved; leave it out when denying');
    }
    await pending(c.req.param('id'));
    const decided = await deps.approvals!.decide(c.req.param('id'), value, who);
    return jsonResponse(c, {
      id: decided.id,
      decision: value.decision,
      call_id: decided.call_id,
      edited: value.arguments !== undefined,
    });
  });
}
