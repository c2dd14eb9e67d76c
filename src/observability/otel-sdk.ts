/**
 * The OpenTelemetry SDK, loaded only when telemetry is on (observability/telemetry.ts imports this file
 * dynamically): a tracer provider with the configured sampler, a batch span processor and the OTLP/HTTP
 * exporter (JSON), registered as the process's tracer provider, W3C trace-context propagator and
 * AsyncLocalStorage context manager. One per process: a second gateway in the same process shares it.
 */
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SamplingResult,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../engine/index.js';
import { otlpJsonTraceSerializer } from './otlp-json.js';
import type { SamplerSetting, Telemetry, TelemetrySettings } from './telemetry-settings.js';
import { setTracer } from './tracing.js';

interface Running {
  provider: BasicTracerProvider;
  settings: TelemetrySettings;
  users: number;
}

let running: Running | undefined;

export function startOtelSdk(settings: TelemetrySettings, logger: Logger): Telemetry {
  if (running) {
    if (running.settings.endpoint !== settings.endpoint || running.settings.serviceName !== settings.serviceName) {
      logger.warn(
        { endpoint: shown(running.settings.endpoint), service_name: running.settings.serviceName },
        'telemetry is already on in this process; this gateway shares its exporter and service name',
      );
    }
    running.users++;
    return handle(running);
  }
  const endpoint = shown(settings.endpoint);
  // The SDK reports export failures (collector down, refused) through its diagnostic logger.
  api.diag.setLogger(
    {
      error: (message) => logger.warn({ endpoint }, `telemetry: ${diagText(message)}`),
      warn: (message) => logger.warn({ endpoint }, `telemetry: ${diagText(message)}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: api.DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(
      resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': settings.serviceVersion }),
    );
  const decided = new DecidedSampler(sampler(settings.sampler), settings.sampler);
  const provider = new BasicTracerProvider({
    resource,
    sampler: decided,
    spanProcessors: [new BatchSpanProcessor(otlpJsonExporter(settings.endpoint))],
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);
  running = { provider, settings, users: 1 };
  setTracer({
    api,
    tracer: api.trace.getTracer('a2e-gateway', settings.serviceVersion),
    sample: (parent, name, kind) => decided.decide(parent, name, kind),
    sampleNew: decided.decideNew,
  });
  logger.info(
    { endpoint, service_name: settings.serviceName, sampler: settings.sampler },
    'telemetry: traces go to the OTLP collector',
  );
  return handle(running);
}

/**
 * The SDK's OTLP/HTTP exporter (its transport: retries, timeout, bounded response, what it reports on failure)
 * with the spans' JSON written by otlp-json.ts instead of the SDK's serializer.
 */
function otlpJsonExporter(url: string): SpanExporter {
  const options = convertLegacyHttpOptions({ url }, 'TRACES', 'v1/traces', { 'Content-Type': 'application/json' });
  return new OTLPExporterBase<ReadableSpan[]>(
    createOtlpHttpExportDelegate(
      options,
      otlpJsonTraceSerializer,
      'otlp_http_span_exporter',
      TraceExporterMetricsHelper,
      undefined,
    ),
  );
}

function handle(r: Running): Telemetry {
  let stopped: Promise<void> | undefined;
  return {
    settings: r.settings,
    shutdown() {
      stopped ??= (async () => {
        if (--r.users > 0) return;
        setTracer(undefined);
        running = undefined;
        try {
          await r.provider.shutdown(); // exports what is still buffered
        } finally {
          api.trace.disable();
          api.propagation.disable();
          api.context.disable();
          api.diag.disable();
        }
      })();
      return stopped;
    },
  };
}

/**
 * One line of what the SDK reports, without a stack: an export failure comes as the error serialised
 * to JSON (stack included), e.g. {"message":"connect ECONNREFUSED 127.0.0.1:4318","code":"ECONNREFUSED",…}.
 */
function diagText(message: string): string {
  try {
    const err = JSON.parse(message) as { message?: unknown };
    if (err && typeof err.message === 'string') return `could not export spans: ${err.message}`;
  } catch {
    // plain text
  }
  return String(message).split('\n')[0]!.slice(0, 500);
}

/** The endpoint as logged: without credentials a URL may carry. */
function shown(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.username || url.password) url.username = url.password = '***';
  return url.href;
}

const SAMPLED: SamplingResult = { decision: SamplingDecision.RECORD_AND_SAMPLED };

/** Where a decision taken before the span (DecidedSampler.decide) waits for the SDK's own sampling of it. */
const DECISION = api.createContextKey('a2e.sampling-decision');

/**
 * The configured sampler, asked before any span is made: `decide` answers whether a span under `parent`
 * would be recorded, so an unsampled request or call makes none. A span it says yes to is started under
 * the context it returns, which carries the answer, so the SDK's own sampling of that span agrees with it
 * (a new root's trace id is drawn anew by the SDK, and a ratio sampler would otherwise decide again on it).
 */
class DecidedSampler implements Sampler {
  /**
   * The decision for a request that starts a trace (no parent): what the configured sampler answers with no
   * parent, drawn without a trace id (a ratio sampler's answer is a uniform draw below the ratio either way).
   */
  readonly decideNew: () => api.Context | undefined;

  constructor(
    private readonly inner: Sampler,
    setting: SamplerSetting,
  ) {
    const yes = api.ROOT_CONTEXT.setValue(DECISION, SAMPLED);
    const ratio = setting.kind === 'ratio' ? setting.ratio : setting.kind === 'always_on' ? 1 : 0;
    // Ratios 0 and 1 draw nothing: a gateway that samples nothing new does no work for such a request.
    this.decideNew =
      ratio <= 0 ? () => undefined : ratio >= 1 ? () => yes : () => (Math.random() < ratio ? yes : undefined);
  }

  decide(parent: api.Context, name: string, kind: api.SpanKind): api.Context | undefined {
    const traceId = api.trace.getSpanContext(parent)?.traceId;
    if (traceId === undefined) return this.decideNew() && parent.setValue(DECISION, SAMPLED);
    const result = this.inner.shouldSample(parent, traceId, name, kind, {}, []);
    return result.decision === SamplingDecision.NOT_RECORD ? undefined : parent.setValue(DECISION, result);
  }

  shouldSample(
    context: api.Context,
    ...rest: Parameters<Sampler['shouldSample']> extends [unknown, ...infer R] ? R : never
  ): SamplingResult {
    return (context.getValue(DECISION) as SamplingResult | undefined) ?? this.inner.shouldSample(context, ...rest);
  }

  toString(): string {
    return this.inner.toString();
  }
}

function sampler(s: SamplerSetting): Sampler {
  const root =
    s.kind === 'ratio'
      ? new TraceIdRatioBasedSampler(s.ratio)
      : s.kind === 'always_on'
        ? new AlwaysOnSampler()
        : new AlwaysOffSampler();
  return s.parentBased ? new ParentBasedSampler({ root }) : root;
}
