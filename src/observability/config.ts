/**
 * The `telemetry:` section: OpenTelemetry traces sent to an OTLP/HTTP collector. Off unless an endpoint is
 * configured here or in the standard OTEL_* environment variables (docs/tracing.md). Referenced from
 * src/config/schema.ts; resolved against the environment by src/observability/telemetry.ts.
 */
import { z } from 'zod';

export const TelemetryConfig = z.strictObject({
  /** false: no traces even when OTEL_* variables name a collector; true: on (default endpoint http://localhost:4318). Unset: on when an endpoint is known. */
  enabled: z.boolean().optional(),
  /**
   * The collector's OTLP/HTTP URL. A bare origin ("http://collector:4318") gets the standard "/v1/traces" path;
   * a URL with a path is used as it is. Default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT.
   */
  otlp_endpoint: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL, e.g. "http://127.0.0.1:4318"' })
    .optional(),
  /** `service.name` of the spans. Default: OTEL_SERVICE_NAME, else "a2e-gateway". */
  service_name: z.string().min(1).max(200).optional(),
  /**
   * Share of new traces recorded, 0 to 1. A request that carries a `traceparent` follows its caller's
   * sampling decision. Default: OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG, else 1 (every trace).
   */
  sample_ratio: z.number().min(0).max(1).optional(),
});
export type TelemetryConfig = z.output<typeof TelemetryConfig>;
