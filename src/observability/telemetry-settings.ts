/** The effective tracing settings and the running exporter's handle, shared by telemetry.ts and the lazily loaded otel-sdk.ts. */
export type SamplerSetting =
  | { kind: 'always_on' | 'always_off'; parentBased: boolean }
  | { kind: 'ratio'; parentBased: boolean; ratio: number };

export interface TelemetrySettings {
  /** The OTLP/HTTP traces URL spans are POSTed to. */
  endpoint: string;
  serviceName: string;
  serviceVersion: string;
  sampler: SamplerSetting;
}

/** Spans go out through OTLP/HTTP as JSON. */
export interface Telemetry {
  readonly settings: TelemetrySettings;
  /** Export what is buffered, then stop (the gateway's close() calls it). */
  shutdown(): Promise<void>;
}
