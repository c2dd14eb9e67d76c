/**
 * A call's outcome line: `call succeeded` / `call failed` at info, with the
 * tool, its kind, the outcome, who stopped it, its duration and ids. The
 * engine writes it when the call settles — unless the call's logger carries it
 * (`LazyChildLogger.callLineCarrier`, asked then): the request's access line of
 * a JSON answer to one call, where the request's line and the call's said the
 * same, writes it in its place with the request's method, path, status and
 * duration added. One line per call, nothing lost.
 */
import type { Call } from './call.js';
import { LazyChildLogger, plainLine, plainLineText } from './child-logger.js';
import { member } from './line-members.js';

/** What a door's access line adds to the call's line when the two are one. */
export interface AccessFields {
  method: string;
  path: string;
  /** HTTP status of the answer. */
  status: number;
  /** From the request's arrival to its response being closed, ms (the call's own `duration_ms` is the tool's run). */
  request_duration_ms: number;
  /** Set when the client went away before the answer was fully sent. */
  aborted?: true;
}

/** True when the call's logger carries its outcome line on a line of its own (asked once, as the call settles). */
export function lineCarried(call: Call): boolean {
  const logger = call.logger;
  return (
    logger instanceof LazyChildLogger && logger.callLineCarrier !== undefined && logger.callLineCarrier.carry(call)
  );
}

/** Write `call`'s outcome line (the call has settled), with the door's access fields when given. */
export function writeCallLine(call: Call, access?: AccessFields): void {
  const r = call.response!.data;
  const msg = r.success ? 'call succeeded' : 'call failed';
  const outcome = r.success ? 'success' : r.error_code;
  const stopped_by = call.stoppedBy;
  // The fields as JSON members, built by hand: the gateway's own logger takes them as text (no fields object,
  // no generic serialisation of it).
  // Numbers (whole ms, a status), the call's own id (hex and dashes) and the stop reason (a word) need no escaping.
  // The tool's name and kind were written once, when it was registered.
  const text =
    `${call.tool.lineMembers}${r.success ? ',"outcome":"success"' : member('outcome', outcome)}` +
    `${stopped_by === undefined ? '' : `,"stopped_by":"${stopped_by}"`},"duration_ms":${r.duration_ms},"call_id":"${call.id}"` +
    member('req_id', call.request.id) +
    (access === undefined
      ? ''
      : `${requestMembers(access.method, access.path)},"status":${access.status}` +
        `,"request_duration_ms":${access.request_duration_ms}${access.aborted ? ',"aborted":true' : ''}`);
  if (plainLineText(call.logger, 'info', text, msg)) return;
  // A logger that takes fields only as an object (one without the gateway's plain-line writer, or a call's logger
  // once it has made its child logger): the same members, parsed back.
  plainLine(call.logger, 'info', JSON.parse(`{${text.slice(1)}}`) as Record<string, unknown>, msg);
}

let lastMethod = '';
let lastPath = '';
let lastRequestMembers = '';

/** `,"method":…,"path":…`; requests nearly always repeat the last one's, whose text is kept. */
function requestMembers(method: string, path: string): string {
  if (method !== lastMethod || path !== lastPath) {
    lastMethod = method;
    lastPath = path;
    lastRequestMembers = `${member('method', method)}${member('path', path)}`;
  }
  return lastRequestMembers;
}
