/**
 * The gateway's HTTP API as the console uses it: same origin, relative to the
 * page (so any server.base_path or proxy prefix works), bearer token from
 * sessionStorage, a session opened by handshake when the gateway wants one.
 */
import { createParser } from 'eventsource-parser';
import type { components } from '../../src/client/schema.js';

type S = components['schemas'];
export type ToolDefinition = S['ToolDefinition'];
export type ToolParameter = S['ToolParameter'];
export type ToolEvent = S['ToolEvent'];
export type ToolCallResponse = S['ToolCallResponse'];
export type CallAccepted = S['CallAccepted'];
export type CallResource = S['CallResource'];
export type AgentStatus = S['AgentStatus'];
export type McpServerStatus = S['McpServerStatus'];
export type SourceStatus = S['SourceStatus'];
export type CallActivity = S['CallActivity'];
export type Health = S['Health'];
export interface Problem {
  path: string;
  message: string;
}

/** The gateway's root, e.g. http://127.0.0.1:8080/a2e/ for a page at …/a2e/ui. */
export const gatewayBase = new URL('.', document.baseURI);
export const url = (path: string): string => new URL(path, gatewayBase).href;

const TOKEN_KEY = 'a2e.token';

/** An A2E error answer (or a failure to reach the gateway). */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly detail: Record<string, unknown> | null = null,
  ) {
    super(message);
  }
  get problems(): Problem[] {
    const p = this.detail?.problems;
    return Array.isArray(p) ? (p as Problem[]) : [];
  }
}

type AuthListener = (error: ApiError) => void;

class Api {
  token: string | null = sessionStorage.getItem(TOKEN_KEY);
  private sessionId = '';
  private authListeners = new Set<AuthListener>();

  setToken(token: string | null): void {
    this.token = token;
    this.sessionId = '';
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  }

  /** Told when the gateway wants a (different) token. */
  onAuthNeeded(listener: AuthListener): void {
    this.authListeners.add(listener);
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { Accept: 'application/json', ...(this.token ? { Authorization: `Bearer ${this.token}` } : {}), ...extra };
  }

  async request<T>(method: string, path: string, body?: Record<string, unknown>, retried = false): Promise<T> {
    const withSession = body && 'type' in body ? { ...body, session_id: this.sessionId } : body;
    let res: Response;
    try {
      res = await fetch(path.startsWith('http') ? path : url(path), {
        method,
        headers: this.headers(body ? { 'Content-Type': 'application/json' } : {}),
        body: withSession ? JSON.stringify(withSession) : undefined,
      });
    } catch (err) {
      throw new ApiError(
        'connection_failed',
        `cannot reach the gateway (${(err as Error).message}); is it running?`,
        0,
      );
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (res.ok) return json as T;
    const e = json as
      | { type?: string; code?: string; message?: string; detail?: Record<string, unknown> | null }
      | undefined;
    const error =
      e?.type === 'error' && e.code
        ? new ApiError(e.code, e.message ?? e.code, res.status, e.detail ?? null)
        : new ApiError('bad_response', `${method} ${path} answered HTTP ${res.status}`, res.status);
    if (error.code === 'unauthorized' && error.detail?.reason === 'session' && !retried) {
      await this.handshake();
      return this.request<T>(method, path, body, true);
    }
    if (error.code === 'unauthorized') for (const l of this.authListeners) l(error);
    throw error;
  }

  /** Open a session for the tools capability (gateways with sessions.required want one). */
  async handshake(): Promise<void> {
    const resp = await this.request<{ ok: boolean; reason: string; session_id: string }>('POST', 'handshake', {
      type: 'handshake/req',
      agent_id: 'a2e-console',
      agent_caps: ['tools'],
      auth_token: this.token,
    });
    if (!resp.ok) throw new ApiError('unauthorized', resp.reason || 'the handshake was refused', 401);
    this.sessionId = resp.session_id;
  }

  list(query: string, kind: string, tags: string[], includeDeferred: boolean): Promise<{ tools: ToolDefinition[] }> {
    return this.request('POST', 'tool/list', {
      type: 'tool/list/req',
      query,
      filter_kind: kind,
      filter_tags: tags,
      include_deferred: includeDeferred,
    });
  }

  startCall(toolName: string, args: Record<string, unknown>, timeout: number): Promise<CallAccepted> {
    return this.request('POST', 'tool/calls', { type: 'tool/call/req', tool_name: toolName, arguments: args, timeout });
  }

  cancel(resultUrl: string): Promise<CallResource> {
    return this.request('DELETE', resultUrl);
  }

  getCall(resultUrl: string): Promise<CallResource> {
    return this.request('GET', resultUrl);
  }

  agents(): Promise<{ agents: AgentStatus[] }> {
    return this.request('GET', 'agents');
  }

  mcpServers(): Promise<{ servers: McpServerStatus[] }> {
    return this.request('GET', 'mcp-servers');
  }

  sources(): Promise<{ sources: SourceStatus[] }> {
    return this.request('GET', 'sources');
  }

  health(): Promise<Health> {
    return this.request('GET', 'healthz');
  }
}

export const api = new Api();

export interface SseMessage {
  event: string;
  id: string | undefined;
  data: string;
}

/**
 * Follow an authenticated SSE stream with fetch (EventSource cannot send a
 * bearer token), reconnecting with Last-Event-ID like EventSource does.
 * Returns the function that stops following.
 */
export function followSse(
  path: string,
  handlers: { onMessage(m: SseMessage): void; onState?(connected: boolean): void; onError?(e: ApiError): void },
  lastEventId?: string,
): () => void {
  const controller = new AbortController();
  let lastId = lastEventId;
  let retryMs = 1000;
  const run = async () => {
    while (!controller.signal.aborted) {
      try {
        const res = await fetch(url(path), {
          headers: api.headers({ Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) }),
          signal: controller.signal,
        });
        if (!res.ok || !res.body) {
          const e = (await res.json().catch(() => null)) as { code?: string; message?: string } | null;
          const error = new ApiError(e?.code ?? 'bad_response', e?.message ?? `HTTP ${res.status}`, res.status);
          handlers.onError?.(error);
          if (res.status === 401 || res.status === 403 || res.status === 404) return;
        } else {
          handlers.onState?.(true);
          const parser = createParser({
            onEvent: (m) => {
              if (m.id !== undefined) lastId = m.id;
              handlers.onMessage({ event: m.event ?? 'message', id: m.id, data: m.data });
            },
            onRetry: (ms) => (retryMs = ms),
          });
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            parser.feed(value);
          }
        }
      } catch {
        if (controller.signal.aborted) return;
      }
      handlers.onState?.(false);
      await new Promise((r) => setTimeout(r, retryMs));
    }
  };
  void run();
  return () => controller.abort();
}
