import type { ErrorCode } from '../protocol/index.js';

/**
 * The one exception type of the gateway. Thrown anywhere before or around a
 * tool's execution; the edges map it to their own wire format in one place
 * (HTTP status + A2E error message for the routes).
 */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly detail: Record<string, unknown> | null;
  readonly retryable: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    options: { detail?: Record<string, unknown> | null; retryable?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.detail = options.detail ?? null;
    this.retryable = options.retryable ?? false;
  }
}

/**
 * A failure a tool reports on purpose, with a message meant for the caller.
 * Anything else a tool throws is also a tool_error, but its message is checked
 * for host paths first (see `safeErrorMessage`).
 */
export class ToolError extends Error {
  /** Structured data to return alongside the error (ToolResult.data). */
  readonly data: unknown;
  /** Process exit code, for tools that run processes. */
  readonly exitCode: number | null;
  /** The tool cut its output (ToolResult.truncated). */
  readonly truncated: boolean;

  constructor(
    message: string,
    options: { data?: unknown; exitCode?: number | null; truncated?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolError';
    this.data = options.data ?? null;
    this.exitCode = options.exitCode ?? null;
    this.truncated = options.truncated ?? false;
  }

  /**
   * Any Error named "ToolError" counts as one (its `data`, `exitCode` and
   * `truncated` read when present): a plugin can report an expected failure
   * without importing anything from the gateway, or with its own copy of it.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof Error && value.name === 'ToolError';
  }
}
