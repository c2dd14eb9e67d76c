/**
 * Tool search: BM25 ranking (MiniSearch) over name, description and tags,
 * then the spec's substring match for what BM25 misses (a part of a word:
 * "etch" in "Fetch"), with plugin-supplied rankings merged by reciprocal
 * rank fusion.
 */
import MiniSearch from 'minisearch';
import type { ToolDefinition } from '../protocol/index.js';

/** Split snake_case, kebab-case and camelCase so "readFile" and "read_file" both match "read file". */
export function tokenize(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

interface Doc {
  id: number;
  name: string;
  description: string;
  tags: string;
}

export class ToolSearchIndex {
  /** Built by the first search: the registry is rebuilt at start-up and on every remote tool change, searched far less often. */
  private built: MiniSearch<Doc> | undefined;
  private readonly tools: readonly ToolDefinition[];
  /** Per tool, its name, description and tags lowercased, for the substring match. */
  private readonly haystacks: readonly string[];

  constructor(tools: readonly ToolDefinition[]) {
    this.tools = tools;
    this.haystacks = tools.map((t) => [t.name, t.description, ...t.tags].join('\n').toLowerCase());
  }

  private get index(): MiniSearch<Doc> {
    if (this.built) return this.built;
    const index = new MiniSearch<Doc>({
      fields: ['name', 'description', 'tags'],
      tokenize,
      searchOptions: {
        boost: { name: 3, tags: 2, description: 1 },
        prefix: (term) => term.length >= 3,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
        combineWith: 'OR',
      },
    });
    index.addAll(this.tools.map((t, id) => ({ id, name: t.name, description: t.description, tags: t.tags.join(' ') })));
    return (this.built = index);
  }

  /** Matching tools, best first: BM25's ranking, then tools whose name, description or a tag contains the query (case-insensitive). */
  search(query: string): ToolDefinition[] {
    const hits = this.index.search(query);
    const ranked = new Set<number>(hits.map((hit) => hit.id as number));
    const found = hits.map((hit) => this.tools[hit.id as number]!);
    const needle = query.trim().toLowerCase();
    if (needle) {
      this.haystacks.forEach((haystack, id) => {
        if (!ranked.has(id) && haystack.includes(needle)) found.push(this.tools[id]!);
      });
    }
    return found;
  }
}

/**
 * Merge several best-first rankings into one (reciprocal rank fusion,
 * k = 60 as in the original paper). Ties keep the order of the first list.
 */
export function fuseRankings(rankings: readonly (readonly ToolDefinition[])[]): ToolDefinition[] {
  if (rankings.length === 1) return [...rankings[0]!];
  const scores = new Map<ToolDefinition, number>();
  for (const ranking of rankings) {
    ranking.forEach((tool, rank) => scores.set(tool, (scores.get(tool) ?? 0) + 1 / (60 + rank + 1)));
  }
  return [...scores.entries()].sort((a, b) => b[1] - a[1]).map(([tool]) => tool);
}
