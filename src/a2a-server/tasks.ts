/**
 * A call seen as an A2A task: task id = call id, contextId = the call's
 * correlation_id, state and artifacts derived from the call's state, kept
 * events and result. Nothing is stored beside the Call itself, so whatever
 * CallStore keeps calls keeps tasks.
 */
import type { Call } from '../engine/index.js';
import type { ToolEvent, ToolResult } from '../protocol/index.js';
import type { TaskState } from '../wire/a2a.js';
import type { ArtifactView, TaskSnapshot, Wire } from './wire.js';

/**
 * The A2A state of a call. A timeout is `canceled` (the gateway stopped the
 * task, the tool did not fail); a tool failure is `failed`.
 */
export function taskState(call: Call): TaskState {
  switch (call.state) {
    case 'awaiting_approval': // its status message names the approval
    case 'running':
      return 'working';
    case 'completed':
      return 'completed';
    case 'canceled':
      return 'canceled';
    case 'failed':
      return call.stoppedBy === 'timeout' ? 'canceled' : 'failed';
  }
}

/** The text a status update carries for an event ("" for a log line, which goes in metadata). */
export function eventText(ev: ToolEvent): string {
  switch (ev.kind) {
    case 'progress':
      return ev.data.message ? `${ev.data.message} (${ev.data.pct}%)` : `${ev.data.pct}%`;
    case 'status':
      return ev.data.message;
    default:
      return '';
  }
}

/** The result as the task's final artifact: the data as a JSON data part, then a text part (the summary, or the data as text). */
export function resultArtifact(wire: Wire, result: ToolResult): ArtifactView {
  const parts: Record<string, unknown>[] = [];
  const data: unknown = result.data;
  if (data !== null) parts.push(wire.dataPart(data));
  const summary: unknown = result.summary;
  const text = textOf(summary === null || summary === undefined ? data : summary);
  if (text) parts.push(wire.textPart(text));
  return { artifactId: 'result', name: 'result', parts };
}

function textOf(data: unknown): string {
  if (data === null || data === undefined) return '';
  return typeof data === 'string' ? data : (JSON.stringify(data) ?? '');
}

/** An `artifact` event's chunk as the artifact it updates (named after the event's `name`). */
export function chunkArtifact(wire: Wire, ev: Extract<ToolEvent, { kind: 'artifact' }>): ArtifactView {
  return { artifactId: ev.data.name, name: ev.data.name, parts: [wire.textPart(ev.data.chunk, ev.data.mime)] };
}

/** What the task reports about the call now. */
export function snapshot(wire: Wire, call: Call): TaskSnapshot {
  const state = taskState(call);
  const response = call.response;
  const artifacts: ArtifactView[] = [];
  let statusText = '';
  const byName = new Map<string, ArtifactView>();
  for (const ev of call.keptEvents) {
    if (ev.kind === 'artifact') {
      const seen = byName.get(ev.data.name);
      const chunk = chunkArtifact(wire, ev);
      if (seen) seen.parts.push(...chunk.parts);
      else {
        byName.set(ev.data.name, chunk);
        artifacts.push(chunk);
      }
    } else {
      const text = eventText(ev);
      if (text) statusText = text;
    }
  }
  const metadata: Record<string, unknown> = { tool_name: call.tool.definition.name };
  if (response) {
    const r = response.data;
    metadata.duration_ms = r.duration_ms;
    if (r.success) {
      artifacts.push(resultArtifact(wire, r));
      statusText = '';
    } else {
      statusText = r.error ?? 'the tool failed';
      metadata.error_code = r.error_code;
      if (r.data !== null) metadata.data = r.data;
    }
    if (r.truncated) metadata.truncated = true;
    if (r.exit_code !== null) metadata.exit_code = r.exit_code;
  }
  return {
    id: call.id,
    contextId: call.request.correlation_id,
    state,
    statusText,
    artifacts,
    metadata,
    updatedAt: statusTime(call),
    history: [requestMessage(wire, call)],
  };
}

/** When the task's status last changed, epoch ms: its end, else its last kept event, else its start. */
export function statusTime(call: Call): number {
  const at = call.response?.ts ?? call.keptEvents.at(-1)?.ts ?? call.createdAt;
  return Math.round(at * 1000);
}

/**
 * The message that started the task, as the gateway read it (the message
 * itself is not kept): the text, for a tool that took it as its one required
 * string parameter; else the arguments as a data part. A task's history is
 * this one message: a tool takes no further input.
 */
export function requestMessage(wire: Wire, call: Call): Record<string, unknown> {
  const args = call.request.arguments;
  const required = call.tool.definition.input_parameters.filter((p) => p.required);
  const names = Object.keys(args);
  const only =
    required.length === 1 && required[0]!.type === 'string' && names.length === 1 && names[0] === required[0]!.name
      ? args[names[0]]
      : undefined;
  const part = typeof only === 'string' ? wire.textPart(only) : wire.dataPart(args);
  return wire.userMessage([part], call.request.id, call.id, call.request.correlation_id, {
    skillId: call.tool.definition.name,
  });
}
