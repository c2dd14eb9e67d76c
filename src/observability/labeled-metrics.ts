/**
 * The two per-call metrics (calls by outcome, call duration), kept as plain
 * samples and exposed to prom-client as metric objects it reads on scrape.
 * prom-client's own Counter/Histogram hash and validate the labels on every
 * call, which measured as a tenth of a fast call's whole cost; here the
 * caller keeps the sample of a label set and a call only increments it.
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

export interface CounterSample {
  readonly labels: Record<string, string>;
  value: number;
}

/** A counter with fixed label names. */
export class LabeledCounter implements CollectedMetric {
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;
  private readonly samples = new Map<string, CounterSample>();

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The sample of a label set, made on first use: keep it and pass it to `inc`. */
  sample(labels: Record<string, string>): CounterSample {
    const key = keyOf(labels);
    let s = this.samples.get(key);
    if (!s) this.samples.set(key, (s = { labels, value: 0 }));
    return s;
  }

  inc(sample: CounterSample): void {
    sample.value++;
  }

  async get(): Promise<MetricData> {
    const values = [...this.samples.values()].filter((s) => s.value > 0).map((s) => ({ labels: { ...s.labels }, value: s.value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every sample in place (samples handed out stay valid). */
  reset(): void {
    for (const s of this.samples.values()) s.value = 0;
  }
}

export interface HistogramSample {
  readonly labels: Record<string, string>;
  buckets: number[]; // non-cumulative counts per upper bound
  sum: number;
  count: number;
}

/** A histogram with fixed buckets and label names. */
export class LabeledHistogram implements CollectedMetric {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly samples = new Map<string, HistogramSample>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The sample of a label set, made on first use: keep it and pass it to `observe`. */
  sample(labels: Record<string, string>): HistogramSample {
    const key = keyOf(labels);
    let s = this.samples.get(key);
    if (!s) this.samples.set(key, (s = { labels, buckets: new Array<number>(this.bounds.length).fill(0), sum: 0, count: 0 }));
    return s;
  }

  observe(sample: HistogramSample, value: number): void {
    const i = this.bounds.findIndex((b) => value <= b);
    if (i >= 0) sample.buckets[i]!++;
    sample.sum += value;
    sample.count++;
  }

  async get(): Promise<MetricData> {
    const values: MetricValue[] = [];
    for (const s of this.samples.values()) {
      if (s.count === 0) continue;
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ labels: { ...s.labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every sample in place (samples handed out stay valid). */
  reset(): void {
    for (const s of this.samples.values()) {
      s.buckets.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
