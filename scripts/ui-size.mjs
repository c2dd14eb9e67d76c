// Prints the console's size (dist/ui, as served, and gzipped) and fails the build over the budget.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_GZIP_BYTES = 150 * 1024;
const dir = new URL('../dist/ui/', import.meta.url).pathname;
const files = ['index.html', ...readdirSync(join(dir, 'assets')).map((f) => `assets/${f}`)];
let raw = 0;
let gzip = 0;
for (const file of files) {
  const bytes = readFileSync(join(dir, file));
  raw += bytes.length;
  gzip += gzipSync(bytes, { level: 9 }).length;
}
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log(
  `console (dist/ui): ${files.length} files, ${kb(raw)}, ${kb(gzip)} gzipped (budget ${kb(BUDGET_GZIP_BYTES)})`,
);
if (gzip > BUDGET_GZIP_BYTES) {
  console.error(
    `the console is over its size budget: ${kb(gzip)} gzipped > ${kb(BUDGET_GZIP_BYTES)}; trim ui/ or its dependencies`,
  );
  process.exit(1);
}
