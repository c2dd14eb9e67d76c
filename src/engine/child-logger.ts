/**
 * A child logger made on first use. Binding a pino child (bindings
 * serialised, redaction set up) costs more than a fast tool call, and most
 * requests never write a line at the configured level: those never pay it.
 */
import type { Call } from './call.js';
import type { Logger } from './plugin.js';

type Level = 'debug' | 'info' | 'warn' | 'error';
type Args = [object, string?] | [string];

/**
 * Where a logger keeps its writer of plain lines (src/logger.ts sets it): a
 * line of the given bindings and fields, written as its child would but without
 * making one and without redaction. Only for fields that can never hold a
 * secret (ids, names, numbers, outcomes).
 */
export const PLAIN_LINE = Symbol.for('a2e-gateway.plainLine');
export type PlainLineWriter = (
  level: Level,
  bindings: Record<string, unknown> | MembersText,
  fields: Record<string, unknown> | MembersText,
  msg: string,
) => void;

/**
 * Fields already written as JSON members: `,"key":value,…` (or '' for none), exactly as JSON.stringify
 * writes them inside an object — for a line built by hand (call-line.ts) rather than as an object.
 */
export type MembersText = string;

const NO_BINDINGS: Record<string, unknown> = Object.freeze({});

/** pino's level check, when the logger has one. */
export function levelEnabled(logger: Logger, level: Level): boolean {
  const check = (logger as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return check === undefined || check.call(logger, level);
}

/** A line whose fields hold no secret, through the cheapest path `logger` offers (see PLAIN_LINE). */
export function plainLine(logger: Logger, level: Level, fields: Record<string, unknown>, msg: string): void {
  if (logger instanceof LazyChildLogger) return logger.line(level, fields, msg);
  const plain = (logger as { [PLAIN_LINE]?: PlainLineWriter })[PLAIN_LINE];
  if (plain !== undefined) plain(level, {}, fields, msg);
  else logger[level](fields, msg);
}

/**
 * Write a line whose fields are given as JSON members text, when `logger` has a plain-line writer
 * for it (see PLAIN_LINE); false when it has none, and the caller must write the line with fields
 * as an object (plainLine).
 */
export function plainLineText(logger: Logger, level: Level, fields: MembersText, msg: string): boolean {
  if (logger instanceof LazyChildLogger) return logger.lineText(level, fields, msg);
  const plain = (logger as { [PLAIN_LINE]?: PlainLineWriter })[PLAIN_LINE];
  if (plain === undefined) return false;
  plain(level, NO_BINDINGS, fields, msg);
  return true;
}

/** What writes a call's outcome line in place of a line of its own (a request's access line: routes/http/request.ts). */
export interface CallLineCarrier {
  /** Asked as the call settles: true when it will write the call's line (call-line.ts writeCallLine). */
  carry(call: Call): boolean;
}

export class LazyChildLogger implements Logger {
  private real: Logger | undefined;
  /** The request's line that carries the outcome line of the call made with this logger, if one does. */
  callLineCarrier: CallLineCarrier | undefined = undefined;

  /**
   * `bindingsText`: the bindings as JSON members text, when the caller has it for free (a request id it
   * checked needs no escaping); plain lines then use it as it is.
   */
  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
    private readonly bindingsText?: MembersText,
  ) {}

  private write(level: Level, args: Args): void {
    if (this.real === undefined && !levelEnabled(this.parent, level)) return;
    (this.get()[level] as (...a: Args) => void)(...args);
  }

  /**
   * A line whose fields hold no secret (the access line, a call's outcome):
   * written by the parent's plain-line writer when it has one and no child was
   * made yet, else as any other line. The output is the same either way.
   */
  line(level: Level, fields: Record<string, unknown>, msg: string): void {
    const plain = this.real === undefined ? (this.parent as { [PLAIN_LINE]?: PlainLineWriter })[PLAIN_LINE] : undefined;
    if (plain !== undefined) plain(level, this.bindingsText ?? this.bindings, fields, msg);
    else this.write(level, [fields, msg]);
  }

  /** `line` with the fields as JSON members text: false (nothing written) when it has to go through a child. */
  lineText(level: Level, fields: MembersText, msg: string): boolean {
    const plain = this.real === undefined ? (this.parent as { [PLAIN_LINE]?: PlainLineWriter })[PLAIN_LINE] : undefined;
    if (plain === undefined) return false;
    plain(level, this.bindingsText ?? this.bindings, fields, msg);
    return true;
  }

  private get(): Logger {
    return (this.real ??= this.parent.child(this.bindings));
  }

  debug(...args: Args): void {
    this.write('debug', args);
  }
  info(...args: Args): void {
    this.write('info', args);
  }
  warn(...args: Args): void {
    this.write('warn', args);
  }
  error(...args: Args): void {
    this.write('error', args);
  }
  child(bindings: Record<string, unknown>): Logger {
    return this.get().child(bindings);
  }
  isLevelEnabled(level: Level): boolean {
    return levelEnabled(this.real ?? this.parent, level);
  }
}
