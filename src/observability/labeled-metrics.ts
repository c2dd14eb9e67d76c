/**
 * The two per-call metrics (calls by outcome, call duration), kept as plain
 * samples and exposed to prom-client as metric objects it reads on scrape.
 * prom-client's own Counter/Histogram hash and validate the labels on every
 * call, which measured as a tenth of a fast call's whole cost; here the
 * caller keeps the sample of a label set and a call only increments it.
 * Made without a registry, they count without prom-client loaded and are
 * registered (registry.registerMetric) when one is made.
 */
import type { Registry } from 'prom-client';

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

interface MetricData {
  name: string;
  help: string;
  type: string;
  values: MetricValue[];
  aggregator: 'sum';
}

/** What prom-client's Registry needs of a metric. */
interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<MetricData>;
  reset(): void;
}

/** Key of a label set: label values in insertion order (the metric's label names are fixed). */
const keyOf = (labels: Record<string, string>) => Object.values(labels).join('\u0000');

/** What the two kinds share: registration, one sample per label set, scrape and reset. */
abstract class LabeledMetric<S extends { readonly labels: Record<string, string> }> implements CollectedMetric {
  readonly aggregator = 'sum' as const;
  private readonly samples = new Map<string, S>();

  constructor(
    readonly type: 'counter' | 'histogram',
    readonly name: string,
    readonly help: string,
    registry: Registry | undefined,
    private readonly newSample: (labels: Record<string, string>) => S,
  ) {
    registry?.registerMetric(this as never);
  }

  /** The sample of a label set, made on first use: keep it and pass it to `inc` / `observe`. */
  sample(labels: Record<string, string>): S {
    const key = keyOf(labels);
    let s = this.samples.get(key);
    if (!s) this.samples.set(key, (s = this.newSample(labels)));
    return s;
  }

  async get(): Promise<MetricData> {
    const values = [...this.samples.values()].flatMap((s) => this.valuesOf(s));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every sample in place (samples handed out stay valid). */
  reset(): void {
    for (const s of this.samples.values()) this.zero(s);
  }

  /** What a sample shows on scrape (nothing while it is zero). */
  protected abstract valuesOf(sample: S): MetricValue[];
  protected abstract zero(sample: S): void;
}

export interface CounterSample {
  readonly labels: Record<string, string>;
  value: number;
}

/** A counter with fixed label names. */
export class LabeledCounter extends LabeledMetric<CounterSample> {
  constructor(name: string, help: string, registry?: Registry) {
    super('counter', name, help, registry, (labels) => ({ labels, value: 0 }));
  }

  inc(sample: CounterSample): void {
    sample.value++;
  }

  protected valuesOf(s: CounterSample): MetricValue[] {
    return s.value > 0 ? [{ labels: { ...s.labels }, value: s.value }] : [];
  }

  protected zero(s: CounterSample): void {
    s.value = 0;
  }
}

export interface HistogramSample {
  readonly labels: Record<string, string>;
  buckets: number[]; // non-cumulative counts per upper bound
  sum: number;
  count: number;
}

/** A histogram with fixed buckets and label names. */
export class LabeledHistogram extends LabeledMetric<HistogramSample> {
  constructor(
    name: string,
    help: string,
    private readonly bounds: readonly number[],
    registry?: Registry,
  ) {
    super('histogram', name, help, registry, (labels) => ({
      labels,
      buckets: new Array<number>(bounds.length).fill(0),
      sum: 0,
      count: 0,
    }));
  }

  observe(sample: HistogramSample, value: number): void {
    const i = this.bounds.findIndex((b) => value <= b);
    if (i >= 0) sample.buckets[i]!++;
    sample.sum += value;
    sample.count++;
  }

  protected valuesOf(s: HistogramSample): MetricValue[] {
    if (s.count === 0) return [];
    const values: MetricValue[] = [];
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += s.buckets[i]!;
      values.push({ labels: { ...s.labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
    });
    values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
    values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
    values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    return values;
  }

  protected zero(s: HistogramSample): void {
    s.buckets.fill(0);
    s.sum = 0;
    s.count = 0;
  }
}
