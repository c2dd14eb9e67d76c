/** Small statistics and formatting helpers for the report. */

export function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Per-round ratios a[i]/b[i] (paired: same round), then their median. */
export function pairedRatio(a, b) {
  return median(a.map((x, i) => x / b[i]));
}

export const fmt = {
  int: (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—'),
  ms: (n) =>
    Number.isFinite(n)
      ? n >= 1000
        ? `${(n / 1000).toFixed(2)} s`
        : `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms`
      : '—',
  /** autocannon reports latencies in whole milliseconds. */
  latency: (n) => (Number.isFinite(n) ? (n < 1 ? '< 1 ms' : `${Math.round(n)} ms`) : '—'),
  /**
   * Truncated, not rounded, to two decimals: every ratio target is "≥ x.xx", and a ratio of 1.497 shown as
   * "1.50×" next to "not met" reads as a contradiction; truncated, the shown value meets a target exactly when
   * the measured one does.
   */
  ratio: (n) => (Number.isFinite(n) ? `${(Math.floor(n * 100 + 1e-9) / 100).toFixed(2)}×` : '—'),
  mb: (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : '—'),
  kb: (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(1)} KB` : '—'),
  pct: (n) => (Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${(n * 100).toFixed(1)} %` : '—'),
};
