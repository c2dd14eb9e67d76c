/**
 * What the gateway answers A2A clients, in the dialect of the request: a
 * task, status and artifact updates, parts and messages. 1.0 wraps send and
 * stream results (`{task}`, `{statusUpdate}`, `{artifactUpdate}`) and spells
 * states `TASK_STATE_*`; 0.3 tags every object with `kind` and spells states
 * in lower case. The method names and state spellings come from the client's
 * own dialect table (src/a2a/dialect.ts).
 */
import { wireState, type DialectName, type TaskState } from '../a2a/dialect.js';
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

  /** The agent's message in a status (text only). */
  message(text: string, taskId: string, contextId: string, messageId = newId()): Json {
    const parts = [this.textPart(text)];
    return this.v1
      ? { messageId, role: 'ROLE_AGENT', parts, taskId, contextId }
      : { kind: 'message', messageId, role: 'agent', parts, taskId, contextId };
  }

  status(t: { id: string; contextId: string }, state: TaskState, text: string): Json {
    const status: Json = { state: wireState(this.dialect, state), timestamp: new Date().toISOString() };
    if (text) status.message = this.message(text, t.id, t.contextId);
    return status;
  }

  artifact(a: ArtifactView): Json {
    return { artifactId: a.artifactId, name: a.name, parts: a.parts };
  }

  /** A bare task (GetTask, CancelTask). */
  task(t: TaskSnapshot): Json {
    const task: Json = {
      id: t.id,
      contextId: t.contextId,
      status: this.status(t, t.state, t.statusText),
      artifacts: t.artifacts.map((a) => this.artifact(a)),
      metadata: t.metadata,
    };
    return this.v1 ? task : { kind: 'task', ...task, history: [] };
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

  artifactUpdate(t: { id: string; contextId: string }, artifact: ArtifactView, append: boolean, lastChunk: boolean): Json {
    const update = { taskId: t.id, contextId: t.contextId, artifact: this.artifact(artifact), append, lastChunk };
    return this.v1 ? { artifactUpdate: update } : { kind: 'artifact-update', ...update };
  }
}

export const WIRES: Record<DialectName, Wire> = { '1.0': new Wire('1.0'), '0.3': new Wire('0.3') };
