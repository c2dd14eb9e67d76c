/**
 * A child logger made on first use. Binding a pino child (bindings
 * serialised, redaction set up) costs more than a fast tool call, and most
 * requests never write a line at the configured level: those never pay it.
 */
import type { Logger } from './plugin.js';

type Level = 'debug' | 'info' | 'warn' | 'error';
type Args = [object, string?] | [string];

/** pino's level check, when the logger has one. */
export function levelEnabled(logger: Logger, level: Level): boolean {
  const check = (logger as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return check === undefined || check.call(logger, level);
}

export class LazyChildLogger implements Logger {
  private real: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  private write(level: Level, args: Args): void {
    if (this.real === undefined && !levelEnabled(this.parent, level)) return;
    (this.get()[level] as (...a: Args) => void)(...args);
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
