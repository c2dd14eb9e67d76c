/**
 * ListTasks / tasks/list: the caller's tasks, most recently updated first,
 * with A2A 1.0's filters (contextId, status, statusTimestampAfter) and cursor
 * pagination. The cursor is the (status time, id) of the last task of the
 * page, so a page starts where the last one ended even while tasks are added.
 */
import { normalizeState, type TaskState } from '../wire/a2a.js';
import type { Call } from '../engine/index.js';
import { RPC } from './jsonrpc.js';
import { RpcError } from '../wire/jsonrpc.js';
import { snapshot, statusTime, taskState } from './tasks.js';
import type { Wire } from './wire.js';

type Json = Record<string, unknown>;

const STATES: ReadonlySet<TaskState> = new Set([
  'submitted',
  'working',
  'input-required',
  'completed',
  'canceled',
  'failed',
  'rejected',
  'auth-required',
]);
const DEFAULT_PAGE = 50;
const MAX_PAGE = 100;

export interface ListQuery {
  contextId?: string;
  state?: TaskState;
  /** Only tasks whose status changed at or after this time (epoch ms). */
  after?: number;
  pageSize: number;
  cursor?: { at: number; id: string };
  historyLength?: number;
  includeArtifacts: boolean;
}

const invalid = (message: string) => new RpcError(RPC.INVALID_PARAMS, message);

/** Read ListTasks params; throws -32602 saying which one is wrong and what it must be. */
export function readListQuery(params: Json): ListQuery {
  const { contextId, status, pageSize, pageToken, historyLength, statusTimestampAfter, includeArtifacts } = params;
  const q: ListQuery = { pageSize: DEFAULT_PAGE, includeArtifacts: false };
  if (contextId !== undefined && contextId !== '') {
    if (typeof contextId !== 'string') throw invalid('params.contextId must be a string');
    q.contextId = contextId;
  }
  if (status !== undefined && status !== '' && status !== 'TASK_STATE_UNSPECIFIED') {
    const state = normalizeState(status);
    if (!STATES.has(state)) {
      throw invalid(
        `params.status "${String(status).slice(0, 50)}" is not a task state: use e.g. TASK_STATE_WORKING (A2A 1.0) or working (0.3)`,
      );
    }
    q.state = state;
  }
  if (pageSize !== undefined) {
    if (!Number.isInteger(pageSize) || (pageSize as number) < 1 || (pageSize as number) > MAX_PAGE) {
      throw invalid(`params.pageSize must be an integer from 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE})`);
    }
    q.pageSize = pageSize as number;
  }
  if (pageToken !== undefined && pageToken !== '') q.cursor = readCursor(pageToken);
  if (historyLength !== undefined) {
    if (!Number.isInteger(historyLength) || (historyLength as number) < 0)
      throw invalid('params.historyLength must be an integer of 0 or more');
    q.historyLength = historyLength as number;
  }
  if (statusTimestampAfter !== undefined && statusTimestampAfter !== '') {
    const at =
      typeof statusTimestampAfter === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(statusTimestampAfter)
        ? Date.parse(statusTimestampAfter)
        : NaN;
    if (Number.isNaN(at))
      throw invalid('params.statusTimestampAfter must be an ISO 8601 time, e.g. "2026-01-31T10:00:00Z"');
    q.after = at;
  }
  if (includeArtifacts !== undefined) {
    if (typeof includeArtifacts !== 'boolean') throw invalid('params.includeArtifacts must be true or false');
    q.includeArtifacts = includeArtifacts;
  }
  return q;
}

function readCursor(token: unknown): { at: number; id: string } {
  try {
    if (typeof token !== 'string') throw new Error('not a string');
    const c = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(c) && c.length === 2 && Number.isFinite(c[0]) && typeof c[1] === 'string')
      return { at: c[0] as number, id: c[1] };
  } catch {
    // below
  }
  throw invalid(
    'params.pageToken is not a token this agent gave: pass the nextPageToken of the previous page, or none for the first page',
  );
}

const cursorOf = (at: number, id: string) => Buffer.from(JSON.stringify([at, id])).toString('base64url');

/** One page of `calls` (already the caller's tasks) as A2A 1.0's ListTasksResponse. */
export function listTasks(calls: Iterable<Call>, q: ListQuery, wire: Wire): Json {
  const matching: { call: Call; at: number }[] = [];
  for (const call of calls) {
    if (q.contextId !== undefined && call.request.correlation_id !== q.contextId) continue;
    if (q.state !== undefined && taskState(call) !== q.state) continue;
    const at = statusTime(call);
    if (q.after !== undefined && at < q.after) continue;
    matching.push({ call, at });
  }
  // Most recently updated first; the id breaks ties so the order (and the cursor) is total.
  const before = (a: { at: number; id: string }, b: { at: number; id: string }) =>
    a.at > b.at || (a.at === b.at && a.id > b.id);
  matching.sort((a, b) => (before({ at: a.at, id: a.call.id }, { at: b.at, id: b.call.id }) ? -1 : 1));
  const cursor = q.cursor;
  const start = cursor ? matching.findIndex((m) => before(cursor, { at: m.at, id: m.call.id })) : 0;
  const page = start < 0 ? [] : matching.slice(start, start + q.pageSize);
  const last = page.at(-1);
  const more = last !== undefined && start + page.length < matching.length;
  return {
    tasks: page.map(({ call }) =>
      wire.task(snapshot(wire, call), { historyLength: q.historyLength, artifacts: q.includeArtifacts }),
    ),
    nextPageToken: more ? cursorOf(last.at, last.call.id) : '',
    pageSize: page.length,
    totalSize: matching.length,
  };
}
