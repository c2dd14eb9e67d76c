/**
 * The A2A wire, shared by the A2A client (src/a2a) and the A2A door (src/a2a-server): the two protocol dialects,
 * A2A's error codes, and the normalised view of what a peer answers. Answers are read leniently: the reference peers mix 1.0
 * method names with 0.3 shapes, so any mix of both is accepted.
 */
import { randomUUID } from 'node:crypto';

export type DialectName = '1.0' | '0.3';

/** A2A's own JSON-RPC error codes (beside JSONRPC's in wire/jsonrpc.ts). */
export const A2A_ERRORS = {
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  EXTENDED_CARD_NOT_CONFIGURED: -32007,
  /** The peer speaks another protocol version: with METHOD_NOT_FOUND, what makes the A2A client switch dialect. */
  VERSION_NOT_SUPPORTED: -32009,
} as const;

export interface Dialect {
  name: DialectName;
  send: string;
  stream: string;
  get: string;
  cancel: string;
  /** Follow a task's updates again (resubscribe). */
  subscribe: string;
  /** Extra headers on every request. */
  headers: Record<string, string>;
  sendParams(text: string, skillId: string, streaming: boolean): Record<string, unknown>;
}

export const DIALECTS: Record<DialectName, Dialect> = {
  '1.0': {
    name: '1.0',
    send: 'SendMessage',
    stream: 'SendStreamingMessage',
    get: 'GetTask',
    cancel: 'CancelTask',
    subscribe: 'SubscribeToTask',
    headers: { 'A2A-Version': '1.0' },
    sendParams: (text, skillId, streaming) => ({
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], metadata: { skillId } },
      ...(streaming ? {} : { configuration: { returnImmediately: true } }),
    }),
  },
  '0.3': {
    name: '0.3',
    send: 'message/send',
    stream: 'message/stream',
    get: 'tasks/get',
    cancel: 'tasks/cancel',
    subscribe: 'tasks/resubscribe',
    headers: {},
    sendParams: (text, skillId, streaming) => ({
      message: {
        kind: 'message',
        messageId: randomUUID(),
        role: 'user',
        parts: [{ kind: 'text', text }],
        metadata: { skillId },
      },
      ...(streaming ? {} : { configuration: { blocking: false } }),
    }),
  },
};

export const otherDialect = (d: DialectName): DialectName => (d === '1.0' ? '0.3' : '1.0');

/** Lower-case A2A task states (0.3 spelling); 1.0's TASK_STATE_* map onto them. */
export type TaskState = string;

export const TERMINAL_STATES = new Set(['completed', 'failed', 'canceled', 'rejected']);
/** States that never finish without more input from the caller, so they end the call too. */
export const INTERRUPTED_STATES = new Set(['input-required', 'auth-required']);

export const isFinal = (state: TaskState): boolean => TERMINAL_STATES.has(state) || INTERRUPTED_STATES.has(state);

/** A task state as `dialect` spells it: "working" (0.3) or "TASK_STATE_WORKING" (1.0). */
export function wireState(dialect: DialectName, state: TaskState): string {
  return dialect === '1.0' ? `TASK_STATE_${state.toUpperCase().replace(/-/g, '_')}` : state;
}

/** "TASK_STATE_INPUT_REQUIRED" / "input-required" / "cancelled" → "input-required" / "canceled". */
export function normalizeState(raw: unknown): TaskState {
  if (typeof raw !== 'string' || !raw) return 'unknown';
  const s = raw
    .replace(/^TASK_STATE_/i, '')
    .toLowerCase()
    .replace(/_/g, '-');
  return s === 'cancelled' ? 'canceled' : s;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The text of every text part, joined by `separator` (a newline unless given). */
export function partsText(parts: unknown, separator = '\n'): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .filter((p): p is Json => isObject(p) && typeof p.text === 'string' && (p.kind === undefined || p.kind === 'text'))
    .map((p) => p.text as string)
    .join(separator);
}

export interface Artifact {
  artifactId: string;
  name: string;
  description: string;
  parts: unknown[];
}

export function normalizeArtifact(raw: unknown): Artifact | undefined {
  if (!isObject(raw)) return undefined;
  return {
    artifactId: typeof raw.artifactId === 'string' ? raw.artifactId : '',
    name: typeof raw.name === 'string' ? raw.name : '',
    description: typeof raw.description === 'string' ? raw.description : '',
    parts: Array.isArray(raw.parts) ? raw.parts : [],
  };
}

/** A remote task as both dialects describe it. */
export interface TaskView {
  id: string;
  state: TaskState;
  /** Text of the status message, if any. */
  statusText: string;
  artifacts: Artifact[];
}

export function taskView(raw: Json): TaskView {
  const status = isObject(raw.status) ? raw.status : {};
  const message = isObject(status.message) ? status.message : undefined;
  const artifacts = Array.isArray(raw.artifacts) ? raw.artifacts.flatMap((a) => normalizeArtifact(a) ?? []) : [];
  return {
    id: typeof raw.id === 'string' ? raw.id : typeof raw.taskId === 'string' ? raw.taskId : '',
    state: normalizeState(status.state),
    statusText: partsText(message?.parts),
    artifacts,
  };
}

/** A result or stream item: a task, a direct message, a status update or an artifact update. */
export type Answer =
  | { kind: 'task'; task: TaskView }
  | { kind: 'message'; text: string; taskId: string }
  | { kind: 'status'; taskId: string; state: TaskState; text: string; final: boolean }
  | { kind: 'artifact'; taskId: string; artifact: Artifact; append: boolean; lastChunk: boolean }
  | { kind: 'unknown' };

/**
 * Classify a SendMessage/GetTask result or a stream item. 1.0 wraps it
 * (`{task}`, `{message}`, `{statusUpdate}`, `{artifactUpdate}`); 0.3 tags it
 * with `kind`; the reference peers send a bare task.
 */
export function classify(result: unknown): Answer {
  if (!isObject(result)) return { kind: 'unknown' };
  if (isObject(result.task)) return { kind: 'task', task: taskView(result.task) };
  if (isObject(result.message)) return messageAnswer(result.message);
  if (isObject(result.statusUpdate)) return statusAnswer(result.statusUpdate);
  if (isObject(result.artifactUpdate)) return artifactAnswer(result.artifactUpdate);
  switch (result.kind) {
    case 'task':
      return { kind: 'task', task: taskView(result) };
    case 'message':
      return messageAnswer(result);
    case 'status-update':
      return statusAnswer(result);
    case 'artifact-update':
      return artifactAnswer(result);
  }
  if (isObject(result.status) || typeof result.id === 'string') return { kind: 'task', task: taskView(result) };
  if (Array.isArray(result.parts)) return messageAnswer(result);
  return { kind: 'unknown' };
}

function messageAnswer(m: Json): Answer {
  return { kind: 'message', text: partsText(m.parts), taskId: typeof m.taskId === 'string' ? m.taskId : '' };
}

function statusAnswer(u: Json): Answer {
  const status = isObject(u.status) ? u.status : {};
  const message = isObject(status.message) ? status.message : undefined;
  return {
    kind: 'status',
    taskId: typeof u.taskId === 'string' ? u.taskId : '',
    state: normalizeState(status.state),
    text: partsText(message?.parts),
    final: u.final === true,
  };
}

function artifactAnswer(u: Json): Answer {
  const artifact = normalizeArtifact(u.artifact);
  if (!artifact) return { kind: 'unknown' };
  return {
    kind: 'artifact',
    taskId: typeof u.taskId === 'string' ? u.taskId : '',
    artifact,
    append: u.append === true,
    lastChunk: u.lastChunk === true,
  };
}

/** MIME type of an artifact's first part that names one (1.0 `mediaType`, 0.3 file `mimeType`). */
export function artifactMime(a: Artifact): string {
  for (const p of a.parts) {
    if (!isObject(p)) continue;
    if (typeof p.mediaType === 'string' && p.mediaType) return p.mediaType;
    if (isObject(p.file) && typeof p.file.mimeType === 'string') return p.file.mimeType;
    if (typeof p.text === 'string') return 'text/plain';
    if (p.kind === 'data' || p.data !== undefined) return 'application/json';
  }
  return 'application/octet-stream';
}

/** The text of an artifact's parts (for the `chunk` of an artifact event). */
export function artifactChunk(a: Artifact): string {
  const text = partsText(a.parts);
  if (text) return text;
  const data = a.parts
    .filter(isObject)
    .map((p) => p.data)
    .filter((d) => d !== undefined);
  return data.length ? JSON.stringify(data.length === 1 ? data[0] : data) : '';
}
