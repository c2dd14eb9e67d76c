/**
 * The two per-call metrics (calls by outcome, call duration), counted in
 * plain maps and exposed to prom-client as metric objects it reads on
 * scrape. prom-client's own Counter/Histogram hash and validate the labels
 * on every call, which measured as a tenth of a fast call's whole cost;
 * here a call costs one map lookup and an increment.
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

/** A counter with fixed label names whose samples are plain numbers in a map. */
export class LabeledCounter implements CollectedMetric {
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;
  private readonly samples = new Map<string, MetricValue>();

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** Add one to the sample of `key`, a string identifying `labels` (made by the caller, who knows the labels). */
  inc(key: string, labels: Record<string, string>): void {
    const s = this.samples.get(key);
    if (s) s.value++;
    else this.samples.set(key, { labels, value: 1 });
  }

  async get(): Promise<MetricData> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: [...this.samples.values()].map((s) => ({ ...s })) };
  }

  reset(): void {
    this.samples.clear();
  }
}

interface HistogramSample {
  labels: Record<string, string>;
  buckets: number[]; // non-cumulative counts per upper bound
  sum: number;
  count: number;
}

/** A histogram with fixed buckets whose samples are plain arrays in a map. */
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

  /** Count `value` in the sample of `key`; `labels` are read only when the key is new. */
  observe(key: string, labels: Record<string, string>, value: number): void {
    let s = this.samples.get(key);
    if (!s) this.samples.set(key, (s = { labels, buckets: new Array(this.bounds.length).fill(0), sum: 0, count: 0 }));
    const i = this.bounds.findIndex((b) => value <= b);
    if (i >= 0) s.buckets[i]!++;
    s.sum += value;
    s.count++;
  }

  async get(): Promise<MetricData> {
    const values: MetricValue[] = [];
    for (const s of this.samples.values()) {
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

  reset(): void {
    this.samples.clear();
  }
}
