/**
 * Whether and where traces go: the `telemetry:` section, completed by the standard OTEL_* environment
 * variables. Off (the default) nothing of the OpenTelemetry SDK is loaded: `startTelemetry` imports it
 * (./otel-sdk.ts) only when an endpoint is known.
 */
import { ConfigError } from '../utils/config-error.js';
import type { TelemetryConfig } from './config.js';
import type { Logger } from '../engine/index.js';
import type { SamplerSetting, Telemetry, TelemetrySettings } from './telemetry-settings.js';

export type { SamplerSetting, Telemetry, TelemetrySettings } from './telemetry-settings.js';

const TRACES_PATH = '/v1/traces';
const DEFAULT_ENDPOINT = `http://localhost:4318${TRACES_PATH}`;
const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];

/** The effective settings, or undefined when tracing is off. Throws a ConfigError for an unusable OTEL_* value. */
export function telemetrySettings(
  config: TelemetryConfig,
  env: NodeJS.ProcessEnv,
  serviceVersion: string,
): TelemetrySettings | undefined {
  if (config.enabled === false) return undefined;
  if (config.enabled === undefined && String(env.OTEL_SDK_DISABLED).trim().toLowerCase() === 'true') return undefined;
  const endpoint =
    config.otlp_endpoint !== undefined ? tracesUrl(config.otlp_endpoint, 'telemetry.otlp_endpoint') : envEndpoint(env);
  if (endpoint === undefined && config.enabled !== true) return undefined;
  return {
    endpoint: endpoint ?? DEFAULT_ENDPOINT,
    serviceName: config.service_name ?? (env.OTEL_SERVICE_NAME?.trim() || 'a2e-gateway'),
    serviceVersion,
    sampler:
      config.sample_ratio !== undefined
        ? { kind: 'ratio', parentBased: true, ratio: config.sample_ratio }
        : envSampler(env),
  };
}

/** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; none when OTEL_TRACES_EXPORTER says "none". */
function envEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  const exporters = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporters && !exporters.split(',').some((e) => e.trim() === 'otlp')) return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return checkedUrl(traces, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT').href;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  const url = checkedUrl(base, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${TRACES_PATH}`;
  return url.href;
}

/** The config's endpoint: a bare origin gets /v1/traces. */
function tracesUrl(text: string, where: string): string {
  const url = checkedUrl(text, where);
  if (url.pathname === '/' || url.pathname === '') url.pathname = TRACES_PATH;
  return url.href;
}

function checkedUrl(text: string, where: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(
      `${where}: ${JSON.stringify(text)} is not a URL; write the collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(
      `${where}: only http:// and https:// collectors are supported (OTLP/HTTP), not "${url.protocol}"; write it like http://127.0.0.1:4318`,
    );
  }
  return url;
}

function envSampler(env: NodeJS.ProcessEnv): SamplerSetting {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  if (!SAMPLERS.includes(name)) {
    throw new ConfigError(
      `OTEL_TRACES_SAMPLER: "${name}" is not supported; use one of ${SAMPLERS.join(', ')} (or telemetry.sample_ratio)`,
    );
  }
  const parentBased = name.startsWith('parentbased_');
  const kind = name.replace('parentbased_', '');
  if (kind !== 'traceidratio') return { kind: kind as 'always_on' | 'always_off', parentBased };
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = arg ? Number(arg) : 1;
  if (!(ratio >= 0 && ratio <= 1)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG: "${arg}" is not a ratio; write a number from 0 to 1, e.g. 0.25`);
  }
  return { kind: 'ratio', parentBased, ratio };
}

/**
 * Turn tracing on when the config or the environment asks for it: load the SDK and the OTLP/HTTP
 * exporter, register them, and hand the spans' tracer to observability/tracing.ts. Undefined when off.
 */
export async function startTelemetry(
  config: TelemetryConfig,
  env: NodeJS.ProcessEnv,
  serviceVersion: string,
  logger: Logger,
): Promise<Telemetry | undefined> {
  const settings = telemetrySettings(config, env, serviceVersion);
  if (!settings) return undefined;
  const { startOtelSdk } = await import('./otel-sdk.js');
  return startOtelSdk(settings, logger);
}
