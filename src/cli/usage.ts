/**
 * Command-line parsing shared by every a2e-gateway command: node:util's
 * parseArgs, with its errors rewritten into one line that names the command,
 * suggests the closest option and points at that command's --help.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { similarNames } from '../utils/similar.js';

/** A mistake on the command line: exit code 2, one line on stderr. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** A port option's value (`source` names it: --port, PORT). */
export function parsePort(value: string, source: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535)
    throw new UsageError(`${source} must be a port number from 0 to 65535, got "${value}"`);
  return port;
}

/** parseArgs for `command` (e.g. "serve", "call"); every parse error becomes a UsageError that says what to do. */
export function parseOptions<O extends Options, P extends boolean = false>(
  command: string,
  args: string[],
  options: O,
  allowPositionals?: P,
): ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: P }>> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: (allowPositionals ?? false) as P });
  } catch (err) {
    throw new UsageError(describeParseError(command, err as Error & { code?: string }, options));
  }
}

function describeParseError(command: string, err: Error & { code?: string }, options: Options): string {
  const help = `run a2e-gateway ${command} --help for its options`;
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const option = /'([^']+)'/.exec(err.message)?.[1] ?? err.message;
      const names = Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
      const close = similarNames(option.replace(/=.*/, ''), names, 2);
      const hint = close.length ? `; did you mean ${close.join(' or ')}?` : '';
      return `${command}: unknown option ${option}${hint} (${help})`;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL': {
      const arg = /'([^']+)'/.exec(err.message)?.[1] ?? '';
      return `${command}: unexpected argument "${arg}"; ${command} takes options only (${help})`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const option = /--[A-Za-z-]+/.exec(err.message)?.[0] ?? 'an option';
      return `${command}: ${option} ${/argument missing/.test(err.message) ? 'needs a value' : 'takes no value'} (${help})`;
    }
    default:
      return `${command}: ${err.message.split('\n')[0]} (${help})`;
  }
}
