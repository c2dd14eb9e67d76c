/**
 * The plugin contract: how tools plug into the engine. Mirrors the spec's
 * ToolPlugin (`_list_tools`, `_execute_tool`, `_search_tools`, `emit`) in
 * TypeScript. Plugins know nothing of HTTP.
 */
import type { ToolDefinition, ToolDefinitionInput, ToolEventDataMap, ToolEventKind } from '../protocol/index.js';

/** Structured logger (pino-compatible subset). */
export interface LogFn {
  (msg: string): void;
  (obj: object, msg?: string): void;
}
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}

/** What a running tool gets from the engine. */
export interface ToolContext {
  /** Aborted on timeout, cancel, client disconnect or shutdown. Stop promptly when it fires. */
  readonly signal: AbortSignal;
  /**
   * Call `listener` once if the call is stopped (timeout, cancel, client disconnect, shutdown) — not when it
   * finishes on its own — with the same reason `signal` is aborted with. Returns its removal. Cheaper than
   * listening on `signal` (which is made on first use and aborted when the call settles): for a tool on the
   * hot path that only needs to stop its own work.
   */
  onStop(listener: (reason: DOMException) => void): () => void;
  /** Wall-clock deadline of the call, in epoch milliseconds. */
  readonly deadline: number;
  /** Whether the caller asked for events. `emit` is a cheap no-op when it did not. */
  readonly streaming: boolean;
  /** Emit a streaming event (progress, status, artifact, log). Ignored once the call has settled. */
  emit<K extends ToolEventKind>(kind: K, data: ToolEventDataMap[K]): void;
  /**
   * Back-pressure for a tool that emits a lot: resolves once the readers of the call's events have
   * caught up (at once when none is more than a quarter of `limits.call_events_bytes` behind; also
   * when the call ends or the lagging reader goes away). A tool that awaits it between bursts of
   * events never loses one to a reader that keeps reading; one that does not has the oldest events a
   * reader has not taken dropped at that budget (the reader gets a gap notice).
   */
  eventsTaken(): Promise<void>;
  /** Session the call belongs to ("" when sessions are not used). */
  readonly sessionId: string;
  /** The authenticated principal (token name) that made the call; null without auth. */
  readonly principal: string | null;
  /** The request's correlation id ("" when none was given). */
  readonly correlationId: string;
  /** The request's message id (the `req_id` of every event and of the response). */
  readonly requestId: string;
  /** Logger bound to this call. */
  readonly logger: Logger;
}

/** Given to a plugin when the gateway starts it. */
export interface PluginHost {
  readonly logger: Logger;
  /** Tell the engine that `listTools()` now returns something else (e.g. a remote agent came up). */
  toolsChanged(): void;
}

/**
 * A source of tools: lists them and runs them. Knows nothing of HTTP; the engine validates arguments, enforces
 * the timeout through `ctx.signal`, numbers events and builds the result.
 *
 * @example
 * ```ts
 * import { ToolError, type ToolPlugin } from 'a2e-gateway/plugin';
 *
 * export const words: ToolPlugin = {
 *   name: 'words',
 *   listTools: () => [{ name: 'count_words', description: 'Count the words in a text',
 *     input_parameters: [{ name: 'text', type: 'string', description: 'The text', required: true }] }],
 *   executeTool(_name, args, ctx) {
 *     const n = String(args.text).split(/\s+/).filter(Boolean).length;
 *     if (n === 0) throw new ToolError('no words in the text; send some');
 *     ctx.emit('progress', { pct: 100 });
 *     return { words: n };
 *   },
 * };
 * ```
 */
export interface ToolPlugin {
  /** Short identifier, used in logs and error messages. */
  readonly name: string;
  /**
   * The plugin's current tool manifest. Called at start and whenever the plugin
   * reports `toolsChanged()`; keep it cheap (return a cached array).
   */
  listTools(): readonly ToolDefinitionInput[];
  /**
   * Run one tool. `args` are already validated against the tool's
   * `input_parameters`. Return JSON-serialisable data (or a `ToolOutput` for
   * summary/exit code); throw a `ToolError` for an expected failure.
   */
  executeTool(name: string, args: Record<string, unknown>, ctx: ToolContext): unknown;
  /**
   * Optional custom discovery over this plugin's own tools, best match first.
   * Without it the engine's BM25 search is used.
   */
  searchTools?(query: string, tags: readonly string[], tools: readonly ToolDefinition[]): ToolDefinition[];
  /** Optional start-up work (connect, fetch, spawn). Awaited before the gateway listens. */
  start?(host: PluginHost): Promise<void> | void;
  /**
   * Optional: tools still being checked after `start` (which may leave slow checks running once the gateway
   * listens). They are callable but not listed: `executeTool` waits for the check, then runs or fails. When
   * the check ends the plugin lists them (or drops them) and reports `toolsChanged()`.
   */
  pendingTools?(): readonly ToolDefinitionInput[];
  /** Optional: what the plugin is still checking after `start` (GET /readyz says not ready meanwhile), or null. */
  loading?(): string | null;
  /**
   * Optional: tools the plugin would offer but cannot on this host, each with why (what to fix, no host paths: a
   * caller and GET /healthz see it). A call to one gets `unknown_tool` saying why, rather than only that no tool
   * has that name; GET /healthz and GET /readyz list them.
   */
  unavailableTools?(): readonly UnavailableTool[];
  /** Optional clean-up at shutdown. */
  stop?(): Promise<void> | void;
  /**
   * True when the tool set changes at run time (e.g. remote agents). A name
   * clash with an earlier plugin is then skipped and reported instead of
   * failing start-up.
   */
  readonly dynamic?: boolean;
}

/** A tool a plugin cannot offer here (ToolPlugin.unavailableTools). */
export interface UnavailableTool {
  readonly tool: ToolDefinitionInput;
  /** Why, and what would fix it, as a sentence without host paths. */
  readonly reason: string;
}

/** A richer return value for `executeTool` than bare data. */
export class ToolOutput {
  readonly data: unknown;
  readonly summary: unknown;
  readonly exitCode: number | null;
  readonly truncated: boolean;
  constructor(init: { data?: unknown; summary?: unknown; exitCode?: number | null; truncated?: boolean }) {
    this.data = init.data ?? null;
    this.summary = init.summary ?? null;
    this.exitCode = init.exitCode ?? null;
    this.truncated = init.truncated ?? false;
  }
}
