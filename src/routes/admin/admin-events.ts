/**
 * GET /admin/events: the gateway's call lifecycle as Server-Sent Events
 * (a call started, finished, was refused) — what the console's "Live
 * activity" shows. Opens with a snapshot (running and recently finished
 * calls), then follows the engine's ActivityFeed live; resumable with
 * Last-Event-ID. With auth on, a token sees its own calls only.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import {
  describeCall,
  type ApprovalSummary,
  type Call,
  type CallActivity,
  type CallStore,
  type Engine,
} from '../../engine/index.js';
import { ErrorMessage } from '../../protocol/index.js';
import type { CallAccess } from '../http/call-access.js';
import { ApprovalView, approvalView } from './approvals.js';
import { CallState } from '../api/calls.spec.js';
import { requestHeader } from '../http/node.js';
import type { HttpLimits } from '../http/limits.js';
import { sseFrame, streamSse } from '../http/sse.js';
import { publicUrl, type PublicUrlOptions } from '../http/urls.js';

export const CallActivitySchema = z
  .object({
    seq: z.int().meta({ description: 'Position in the feed (-1 in a snapshot)' }),
    type: z.enum(['call.started', 'call.finished', 'call.refused']),
    ts: z.number().meta({ description: 'When it happened, Unix seconds' }),
    call_id: z.string().meta({ description: 'Server-assigned call id; "" for a refused call' }),
    req_id: z.string(),
    tool_name: z.string(),
    kind: z.string().nullable(),
    principal: z.string().nullable().meta({ description: "The token's name (auth on), else null" }),
    session_id: z.string(),
    state: z.union([CallState, z.literal('refused')]),
    created_at: z.number().meta({ description: 'When the call started, Unix seconds' }),
    duration_ms: z.int().nullable().meta({ description: 'Set once finished' }),
    error_code: z.string().nullable(),
    events_url: z.url().optional().meta({ description: 'For call resources (POST /tool/calls): its event stream' }),
    result_url: z
      .url()
      .optional()
      .meta({ description: 'For call resources: GET for state and result, DELETE to cancel' }),
  })
  .meta({ id: 'CallActivity', description: 'One call lifecycle event (never arguments or results)' });

export const ActivitySnapshot = z
  .object({
    calls: z
      .array(CallActivitySchema)
      .meta({ description: 'Running calls, then recently finished ones, oldest first' }),
    approvals: z
      .array(ApprovalView)
      .optional()
      .meta({ description: 'Pending approvals, oldest first: for approvers only' }),
  })
  .meta({
    id: 'ActivitySnapshot',
    description: 'Sent first (`event: snapshot`), and again when a resume is not possible',
  });

const example = {
  seq: 7,
  type: 'call.finished',
  ts: 1716123458.3,
  call_id: '0b9e4c1a-3f57-4d2e-8a61-5c7f2d9e1b34',
  req_id: 'g7h8i9',
  tool_name: 'read_file',
  kind: 'native',
  principal: 'ci',
  session_id: '',
  state: 'completed',
  created_at: 1716123457.1,
  duration_ms: 1200,
  error_code: null,
};

export const adminEventsRoute = createRoute({
  method: 'get',
  path: '/admin/events',
  operationId: 'activityEvents',
  tags: ['meta'],
  summary: 'Live call activity (Server-Sent Events, resumable)',
  description:
    'Starts with `event: snapshot` (ActivitySnapshot: running and recently finished calls), then one event per ' +
    'lifecycle change: `event: call.started`, `call.finished` or `call.refused`, each carrying a CallActivity. ' +
    'Every event has an `id`; reconnect with it in `Last-Event-ID` to get what was missed, or a new snapshot when ' +
    'that is no longer kept. With `auth` on, a token sees only the calls made with it. Costs nothing per call while ' +
    'nobody watches. For an approver (approvals.approvers; anyone without auth) the snapshot also lists the pending ' +
    'approvals (`approvals`), and `approval.pending` (an Approval) and `approval.decided` (`{ id, call_id, decision, approver }`, ' +
    'decision approve, deny, expired or canceled) follow as they happen (a resumed stream carries no list: GET /admin/approvals); ' +
    'nobody else sees approvals here.',
  request: {
    headers: z.object({
      'last-event-id': z.string().optional().meta({ description: 'The id of the last event seen, to resume' }),
    }),
  },
  responses: {
    200: {
      description: 'The event stream',
      content: { 'text/event-stream': { schema: z.union([ActivitySnapshot, CallActivitySchema]), example } },
    },
    401: {
      description: 'Missing or wrong bearer token (`unauthorized`)',
      content: { 'application/json': { schema: ErrorMessage } },
    },
  },
});

export interface AdminEventsDeps {
  engine: Engine;
  /** Call resources: calls kept here get their events_url and result_url. */
  store: CallStore;
  access?: CallAccess;
  urls: PublicUrlOptions;
  /** Heartbeats (the other limits are for reading requests and call streams). */
  limits: HttpLimits;
  retryMs: number;
  /** Who sees pending approvals on the stream (approvals.approvers); undefined: nobody but callers of a gateway without auth. */
  isApprover?: (principal: string | null) => boolean;
  authOn?: boolean;
}

/** Frames a slow watcher may fall behind by before its stream is ended (it resumes with a snapshot). */
const MAX_BEHIND = 1000;

export function registerAdminEventsRoute(app: OpenAPIHono, deps: AdminEventsDeps): void {
  const { engine, store } = deps;
  const feed = engine.activity;

  app.openAPIRegistry.registerPath(adminEventsRoute);
  app.get(adminEventsRoute.path, async (c) => {
    const principal = c.get('principal')?.name ?? null;
    const credential = c.get('principal')?.credential;
    // A call is its credential's: a token rotated under the same name does not see the calls of the one before.
    const visible = (a: CallActivity, call: Call | undefined) =>
      principal === null ||
      (a.principal === principal && (call?.credential === undefined || call.credential === credential));
    const id = (seq: number) => `${feed.epoch}.${seq}`;
    const withUrls = (a: CallActivity, call: Call | undefined) => {
      if (!call || store.get(call.id) !== call) return a;
      const resultUrl = publicUrl(c, deps.urls, `/tool/calls/${encodeURIComponent(call.id)}`);
      const query = new URLSearchParams(deps.access?.eventsQuery(call) ?? {}).toString();
      return { ...a, result_url: resultUrl, events_url: `${resultUrl}/events${query ? `?${query}` : ''}` };
    };
    const approver =
      engine.approvals !== undefined && !(deps.authOn === true && !(deps.isApprover?.(principal) ?? false));
    const snapshot = () => {
      const calls: CallActivity[] = [];
      const seen = new Set<string>();
      const add = (a: CallActivity, call: Call | undefined) => {
        if (seen.has(a.call_id) || !visible(a, call)) return;
        seen.add(a.call_id);
        calls.push(withUrls(a, call));
      };
      for (const { activity, call } of feed.recentFinished().reverse()) add(activity, call);
      for (const call of store.list()) {
        if (call.settled)
          add(
            describeCall(call, 'call.finished', call.response!.data.error_code, call.response!.data.duration_ms),
            call,
          );
      }
      for (const call of engine.runningCalls()) add(describeCall(call, 'call.started', null), call);
      calls.sort((a, b) => a.created_at - b.created_at);
      const approvals = approver ? { approvals: pendingList.map((a) => approvalView(a)) } : {};
      return sseFrame('snapshot', JSON.stringify({ calls: calls.slice(-100), ...approvals }), id(feed.lastSeq));
    };

    const resumeFrom = lastSeen(c, feed.epoch);
    // Every instance's pending approvals (the shared store's); this instance's alone when the store does not answer.
    const pendingList: ApprovalSummary[] = !approver
      ? []
      : await Promise.resolve(engine.approvals!.store.list()).catch(() =>
          engine.approvals!.list().map((a) => a.summary),
        );
    return streamSse(c, { heartbeatS: deps.limits.heartbeatS, preamble: `retry: ${deps.retryMs}\n` }, (sink) => {
      let pending: [CallActivity, Call | undefined][] = [];
      let behind = 0;
      let finish!: () => void;
      const done = new Promise<void>((resolve) => (finish = resolve));
      // Sent on the next microtask: a call started through POST /tool/calls is in the store by then (it gets its URLs).
      const flush = () => {
        const batch = pending;
        pending = [];
        let frames = '';
        for (const [a, call] of batch) frames += sseFrame(a.type, JSON.stringify(withUrls(a, call)), id(a.seq));
        if (sink.write(frames)) behind = 0;
        else if ((behind += batch.length) > MAX_BEHIND) finish();
      };
      const stop = feed.watch((a, call) => {
        if (!visible(a, call)) return;
        if (pending.length === 0) queueMicrotask(flush);
        pending.push([a, call]);
      });
      const missed = resumeFrom === undefined ? undefined : feed.since(resumeFrom);
      if (missed) {
        for (const { activity, call } of missed) if (visible(activity, call)) pending.push([activity, call]);
        if (pending.length) flush();
      } else {
        sink.write(snapshot());
      }
      const stopApprovals = approver ? followApprovals(sink, engine) : () => {};
      sink.onDisconnect(finish);
      return done.finally(() => (stop(), stopApprovals()));
    });
  });
}

/** Approvals as they come and go, for an approver's stream (frames without ids: the snapshot or GET /admin/approvals has the list). */
function followApprovals(sink: { write(frame: string): boolean }, engine: Engine): () => void {
  return engine.approvals!.watchAll((event) => {
    const data =
      event.type === 'approval.pending'
        ? approvalView(event.summary)
        : { id: event.id, call_id: event.call_id, decision: event.decision, approver: event.approver };
    sink.write(sseFrame(event.type, JSON.stringify(data)));
  });
}

/** The seq in Last-Event-ID when it is one of this feed's ids, else undefined (start with a snapshot). */
function lastSeen(c: Context, epoch: string): number | undefined {
  const header = requestHeader(c, 'last-event-id')?.trim();
  const match = header ? /^([0-9a-z]{1,16})\.(-1|\d{1,15})$/.exec(header) : null;
  return match && match[1] === epoch ? Number(match[2]) : undefined;
}
