/**
 * Events a plugin emits are checked against the four ToolEvent shapes before
 * they are kept: a bad one (unknown kind, progress without pct, pct "x") is a
 * plugin bug, dropped and logged once per tool, and the call goes on.
 */
import type { z } from 'zod';
import {
  ArtifactData,
  LogData,
  ProgressData,
  StatusData,
  TOOL_EVENT_KINDS,
  formatProblems,
  toProblems,
  truncateText,
} from '../protocol/index.js';
import type { Logger } from './plugin.js';
import type { RegisteredTool } from './registry.js';

/**
 * Whether `data` has the shape of a `kind` event. By hand, not with zod:
 * it runs on every emit. Must agree with the protocol's event data schemas.
 */
export function isToolEvent(kind: unknown, data: unknown): boolean {
  if (data === null || typeof data !== 'object') return false;
  const d = data as Record<string, unknown>;
  switch (kind) {
    case 'progress':
      return Number.isSafeInteger(d.pct) && typeof d.message === 'string';
    case 'status':
      return typeof d.message === 'string';
    case 'log':
      return typeof d.level === 'string' && typeof d.message === 'string';
    case 'artifact':
      return (
        typeof d.name === 'string' &&
        typeof d.mime === 'string' &&
        typeof d.chunk === 'string' &&
        typeof d.final === 'boolean'
      );
    default:
      return false;
  }
}

const DATA_SCHEMAS: Record<string, z.ZodType> = {
  progress: ProgressData,
  status: StatusData,
  artifact: ArtifactData,
  log: LogData,
};

/** What is wrong with an event `isToolEvent` refused (zod, for the message only: bad events are rare). */
export function eventProblem(kind: unknown, data: unknown): string {
  const schema = typeof kind === 'string' ? DATA_SCHEMAS[kind] : undefined;
  if (!schema) {
    const given = typeof kind === 'string' ? `"${truncateText(kind, 64)}"` : typeof kind;
    return `kind ${given} is not one of ${TOOL_EVENT_KINDS.join(', ')}`;
  }
  const r = schema.safeParse(data);
  if (r.success) return 'the data does not match its kind'; // unreachable while the hand check agrees with the schemas
  return formatProblems(toProblems(r.error.issues, 'data'));
}

const reported = new WeakSet<RegisteredTool>();

/** Log a dropped event, once per tool (a buggy plugin emits the same bad event many times). */
export function reportBadEvent(tool: RegisteredTool, logger: Logger, kind: unknown, data: unknown): void {
  if (reported.has(tool)) return;
  reported.add(tool);
  const name = tool.definition.name;
  logger.warn(
    { tool_name: name, problem: eventProblem(kind, data) },
    `tool "${name}" emitted an event that is not a valid ToolEvent; it was dropped and the call goes on. ` +
      'Fix the plugin: emit progress {pct: integer, message}, status {message}, log {level, message} or ' +
      'artifact {name, mime, chunk, final}. Further bad events of this tool are dropped without a log line',
  );
}
