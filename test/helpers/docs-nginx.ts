/** The ```nginx blocks of the docs (docs/*.md), for tests that hold what the docs tell a deployer to run. */
import { readdir, readFile } from 'node:fs/promises';

export interface DocsNginxBlock {
  /** e.g. "docs/deployment.md" */
  file: string;
  text: string;
}

export async function docsNginxBlocks(): Promise<DocsNginxBlock[]> {
  const dir = new URL('../../docs/', import.meta.url);
  const blocks: DocsNginxBlock[] = [];
  for (const name of (await readdir(dir)).filter((n) => n.endsWith('.md')).sort()) {
    const md = await readFile(new URL(name, dir), 'utf8');
    for (const m of md.matchAll(/```nginx\n([\s\S]*?)```/g)) blocks.push({ file: `docs/${name}`, text: m[1]! });
  }
  return blocks;
}
