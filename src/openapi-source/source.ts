/**
 * One configured OpenAPI source: its document loaded (and re-read every
 * `refresh_s`), its selected operations as tools, its credential, its
 * health. A document that fails to load leaves the source unhealthy (its
 * last tools, if any, still served) and is tried again with backoff; the
 * other sources are not affected.
 */
import type { Dispatcher } from 'undici';
import type { Logger, ToolContext } from '../engine/index.js';
import type { OpenApiSourceStatus } from '../protocol/index.js';
import { Credential, scrub } from '../security/credential.js';
import type { OpenApiSourceConfig } from './config.js';
import { isUrl, loadDocument } from './document.js';
import { exchange, type ExchangeSettings } from './exchange.js';
import { readBounded } from '../security/dispatcher-fetch.js';
import { documentBaseUrl, operationsOf } from './operations.js';
import { buildRequest } from './request.js';
import { operationSelector } from './selection.js';
import { operationTool, refResolver, toolName, type OperationTool } from './tool-definition.js';

const RETRY_MIN_MS = 2000;
const RETRY_MAX_MS = 300_000;

export type SourceState = OpenApiSourceStatus['state'];

export class OpenApiSource {
  tools: OperationTool[] = [];
  state: SourceState;
  private base: URL | null = null;
  private skipped: { operation: string; reason: string }[] = [];
  private lastRefresh: number | null = null;
  private lastError: string | null = null;
  private lastText: string | null = null;
  private credential: Credential | null = null;
  /** What each call's exchange needs from the source (made on the first call after the base URL is known). */
  private exchangeSettings: ExchangeSettings | undefined;
  /** The fixed headers' values, scrubbed like the credential's. */
  private headerSecrets: string[] | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;

  constructor(
    readonly id: string,
    readonly config: OpenApiSourceConfig,
    private readonly deps: {
      dispatcher: Dispatcher;
      env: NodeJS.ProcessEnv;
      maxSpecBytes: number;
      maxRedirects: number;
      logger: Logger;
      /** The tools changed (loaded, refreshed to something else). */
      changed(): void;
    },
  ) {
    this.state = config.enabled ? 'loading' : 'disabled';
  }

  /** Load the document (never throws: a failure is the source's state). */
  async start(): Promise<void> {
    if (!this.config.enabled) return;
    try {
      const auth = this.config.auth;
      this.credential = auth
        ? new Credential(auth, this.deps.env, (url, init, max) =>
            readBounded(this.deps.dispatcher, new URL(url), max, init),
          )
        : null;
    } catch (err) {
      this.fail((err as Error).message);
      return; // an unset variable needs a config change (a reload), not a retry
    }
    await this.load();
  }

  private async load(): Promise<void> {
    try {
      const loaded = await loadDocument(
        this.config.spec,
        (url, max) => readBounded(this.deps.dispatcher, url, max),
        this.deps.maxSpecBytes,
      );
      if (this.stopped) return;
      this.failures = 0;
      this.lastRefresh = Date.now();
      this.lastError = null;
      const wasReady = this.state === 'ready';
      this.state = 'ready';
      if (loaded.text !== this.lastText) {
        this.lastText = loaded.text;
        this.build(loaded.document, loaded.url);
        this.deps.changed();
      } else if (!wasReady) this.deps.changed();
      this.schedule(this.config.refresh_s !== undefined ? this.config.refresh_s * 1000 : null);
    } catch (err) {
      if (this.stopped) return;
      this.failures++;
      this.fail(`the OpenAPI document could not be loaded: ${(err as Error).message}`);
      this.schedule(
        Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (this.failures - 1), (this.config.refresh_s ?? Infinity) * 1000),
      );
    }
  }

  private fail(message: string): void {
    this.lastError = scrub(message, this.secrets());
    const had = this.tools.length > 0;
    if (!had) this.state = 'failed';
    this.deps.logger.warn(
      { openapi_source: this.id, error: this.lastError },
      `OpenAPI source "${this.id}": ${this.lastError}`,
    );
    if (!had) this.deps.changed();
  }

  private schedule(ms: number | null): void {
    if (ms === null || this.stopped) return;
    this.timer = setTimeout(() => void this.load(), ms);
    this.timer.unref();
  }

  private build(document: Record<string, unknown>, specUrl: URL | null): void {
    const configured = this.config.base_url;
    this.base = configured ? new URL(configured) : documentBaseUrl(document, specUrl);
    const select = operationSelector(this.config.operations.include, this.config.operations.exclude);
    const hidden = {
      headers: new Set([
        ...(this.credential?.headerNames ?? []),
        ...Object.keys(this.config.headers).map((h) => h.toLowerCase()),
      ]),
      query: this.credential?.queryNames ?? new Set<string>(),
    };
    const openapi31 = typeof document.openapi === 'string' && document.openapi.startsWith('3.1');
    const resolve = refResolver(document);
    const tools: OperationTool[] = [];
    const names = new Set<string>();
    const skipped: { operation: string; reason: string }[] = [];
    for (const op of operationsOf(document)) {
      if (!select(op)) continue;
      const label = op.operationId ?? `${op.method} ${op.path}`;
      if (op.unsupported) {
        skipped.push({ operation: label, reason: op.unsupported });
        continue;
      }
      let name = toolName(this.id, op);
      for (let n = 2; names.has(name); n++) name = `${toolName(this.id, op)}_${n}`;
      names.add(name);
      tools.push(operationTool(this.id, name, op, hidden, openapi31, resolve));
    }
    if (this.base === null)
      skipped.push({ operation: '*', reason: 'no base URL: the document has no servers (or host); set base_url' });
    this.tools = this.base === null ? [] : tools;
    this.skipped = skipped;
  }

  secrets(): string[] {
    this.headerSecrets ??= Object.values(this.config.headers).filter((v) => v.length >= 4);
    return this.credential ? [...this.credential.secrets(), ...this.headerSecrets] : this.headerSecrets;
  }

  call(tool: OperationTool, args: Record<string, unknown>, ctx: ToolContext) {
    const base = this.base!;
    // Made once per base URL, not per call.
    if (this.exchangeSettings?.origin !== base.origin)
      this.exchangeSettings = {
        dispatcher: this.deps.dispatcher,
        origin: base.origin,
        credential: this.credential,
        timeoutS: this.config.timeout_s,
        maxResponseBytes: this.config.max_response_bytes,
        maxRedirects: this.deps.maxRedirects,
        secrets: () => this.secrets(),
      };
    return exchange(
      this.exchangeSettings,
      buildRequest(base, tool, args, this.config.headers),
      ctx,
      tool.operation.streams,
    );
  }

  status(): OpenApiSourceStatus {
    return {
      id: this.id,
      spec: isUrl(this.config.spec) ? redactUrl(this.config.spec) : this.config.spec,
      base_url: this.base?.href ?? null,
      state: this.state,
      tools: this.tools.map((t) => t.name),
      skipped: this.skipped,
      last_refresh: this.lastRefresh === null ? null : new Date(this.lastRefresh).toISOString(),
      last_error: this.lastError,
    };
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/** A URL without user:password or query (either may hold a key). */
function redactUrl(text: string): string {
  const u = new URL(text);
  u.username = '';
  u.password = '';
  u.search = '';
  return u.href;
}
