/**
 * What the gateway answers A2A clients, in the dialect of the request: a
 * task, status and artifact updates, parts and messages. 1.0 wraps send and
 * stream results (`{task}`, `{statusUpdate}`, `{artifactUpdate}`) and spells
 * states `TASK_STATE_*`; 0.3 tags every object with `kind` and spells states
 * in lower case. The method names and state spellings come from the client's
 * own dialect table (src/wire/a2a.ts).
 */
import { wireState, type DialectName, type TaskState } from '../wire/a2a.js';
import { newId } from '../protocol/index.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An artifact before it is put on the wire. */
export interface ArtifactView {
  artifactId: string;
  name: string;
  parts: Json[];
}

/** A task before it is put on the wire. */
export interface TaskSnapshot {
  id: string;
  contextId: string;
  state: TaskState;
  /** Text of the status message ("" for none). */
  statusText: string;
  artifacts: ArtifactView[];
  metadata: Json;
  /** When its status last changed (epoch ms); now when unset. */
  updatedAt?: number;
  /** Its messages, oldest first (the wire's own shapes). */
  history?: Json[];
}

/** What of a task to put on the wire (GetTask's historyLength, ListTasks' includeArtifacts). */
export interface TaskView {
  /** Most recent messages of the history to include: 0 none, unset all. */
  historyLength?: number;
  /** Include the artifacts (default true). */
  artifacts?: boolean;
}

export class Wire {
  constructor(readonly dialect: DialectName) {}

  get v1(): boolean {
    return this.dialect === '1.0';
  }

  textPart(text: string, mediaType?: string): Json {
    if (this.v1) return mediaType ? { text, mediaType } : { text };
    return { kind: 'text', text };
  }

  /** A JSON data part. 0.3 data parts must hold an object: other values are wrapped as `{value}`. */
  dataPart(data: unknown): Json {
    if (this.v1) return { data, mediaType: 'application/json' };
    return { kind: 'data', data: isObject(data) ? data : { value: data } };
  }

  /** The user's message that started a task. */
  userMessage(parts: Json[], messageId: string, taskId: string, contextId: string, metadata: Json): Json {
    return this.v1
      ? { messageId, role: 'ROLE_USER', parts, taskId, contextId, metadata }
      : { kind: 'message', messageId, role: 'user', parts, taskId, contextId, metadata };
  }

  /** The agent's message in a status (text only). */
  message(text: string, taskId: string, contextId: string, messageId = newId()): Json {
    const parts = [this.textPart(text)];
    return this.v1
      ? { messageId, role: 'ROLE_AGENT', parts, taskId, contextId }
      : { kind: 'message', messageId, role: 'agent', parts, taskId, contextId };
  }

  status(t: { id: string; contextId: string }, state: TaskState, text: string, at = Date.now()): Json {
    const status: Json = { state: wireState(this.dialect, state), timestamp: new Date(at).toISOString() };
    if (text) status.message = this.message(text, t.id, t.contextId);
    return status;
  }

  artifact(a: ArtifactView): Json {
    return { artifactId: a.artifactId, name: a.name, parts: a.parts };
  }

  /** A bare task (GetTask, CancelTask, ListTasks). */
  task(t: TaskSnapshot, view: TaskView = {}): Json {
    const task: Json = { id: t.id, contextId: t.contextId, status: this.status(t, t.state, t.statusText, t.updatedAt) };
    // ListTasks without includeArtifacts: the field is left out, not empty (A2A 1.0 §3.1.4).
    if (view.artifacts !== false) task.artifacts = t.artifacts.map((a) => this.artifact(a));
    task.metadata = t.metadata;
    const n = view.historyLength;
    const history = n === 0 ? [] : (t.history ?? []).slice(n === undefined ? 0 : -n);
    if (history.length || !this.v1) task.history = history;
    return this.v1 ? task : { kind: 'task', ...task };
  }

  /** A task as the result of SendMessage or the first item of a stream. */
  taskResult(t: TaskSnapshot): Json {
    const task = this.task(t);
    return this.v1 ? { task } : task;
  }

  statusUpdate(
    t: { id: string; contextId: string },
    state: TaskState,
    text: string,
    options: { final?: boolean; metadata?: Json } = {},
  ): Json {
    const update: Json = { taskId: t.id, contextId: t.contextId, status: this.status(t, state, text) };
    if (options.metadata) update.metadata = options.metadata;
    // 1.0 has no `final`: the stream ends after the last update.
    return this.v1 ? { statusUpdate: update } : { kind: 'status-update', ...update, final: options.final === true };
  }

  artifactUpdate(
    t: { id: string; contextId: string },
    artifact: ArtifactView,
    append: boolean,
    lastChunk: boolean,
  ): Json {
    const update = { taskId: t.id, contextId: t.contextId, artifact: this.artifact(artifact), append, lastChunk };
    return this.v1 ? { artifactUpdate: update } : { kind: 'artifact-update', ...update };
  }
}

export const WIRES: Record<DialectName, Wire> = { '1.0': new Wire('1.0'), '0.3': new Wire('0.3') };
