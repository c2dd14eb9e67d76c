/**
 * "Did you mean": the names closest to a mistyped one, by edit distance
 * (insertions, deletions, substitutions and swaps of neighbours each cost 1),
 * case-insensitive. Used for unknown tools, unknown CLI options and config
 * values; never on the hot path of a successful call.
 */

/** Optimal string alignment distance between `a` and `b`, or `limit + 1` once it is sure to exceed `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      if (d < best) best = d;
    }
    if (best > limit) return limit + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/** How many edits still count as a typo of a name this long. */
const typoLimit = (length: number) => (length <= 4 ? 1 : length <= 11 ? 2 : 3);

/**
 * Up to `max` of `candidates` that `name` is probably a typo of, closest
 * first: the same name in another case, a name containing it (3+ characters),
 * or one within a few edits.
 */
export function similarNames(name: string, candidates: Iterable<string>, max = 3): string[] {
  const lower = name.toLowerCase();
  const limit = typoLimit(lower.length);
  const scored: { name: string; score: number }[] = [];
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    if (c === lower) scored.push({ name: candidate, score: 0 });
    else if (lower.length >= 3 && c.includes(lower)) scored.push({ name: candidate, score: 0.5 });
    else {
      const d = editDistance(lower, c, limit);
      if (d <= limit) scored.push({ name: candidate, score: d });
    }
  }
  return scored
    .sort((x, y) => x.score - y.score)
    .slice(0, max)
    .map((s) => s.name);
}
