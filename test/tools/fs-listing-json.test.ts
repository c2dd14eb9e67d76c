import { describe, expect, it } from 'vitest';
import { ENTRY_TYPES, type RawListing } from '../../src/tools/fs/threads/sync-threads.js';
import { listingJson } from '../../src/tools/fs/tools/listing-json.js';

/** What list_dir answered before it wrote the text itself: the object form, through JSON.stringify. */
function viaObjects(shown: string, { names, types, sizes }: RawListing, limit: number): string {
  const prefix = shown === '.' ? '' : `${shown}/`;
  const entries = names.slice(0, limit).map((name, i) => {
    const type = ENTRY_TYPES[types[i]!]!;
    if (sizes === null) return { path: prefix + name, type };
    return { path: prefix + name, type, size: type === 'file' && sizes[i]! >= 0 ? sizes[i]! : null };
  });
  return JSON.stringify({ path: shown, entries, truncated: names.length > limit });
}

const AWKWARD = [
  'plain.txt',
  'with "quotes"',
  'back\\slash',
  'tab\there',
  'new\nline',
  'nul\u0000byte',
  '\u001f unit separator',
  'del\u007f',
  'lone \ud800 high',
  'lone \udfff low',
  'pair \ud83d\ude00 emoji',
  'ünïcödé ✓',
  '\u2028line separator\u2029',
  '</script>',
  '',
];

function listing(names: string[], withSizes: boolean): RawListing {
  const types = Uint8Array.from(names, (_, i) => i % ENTRY_TYPES.length);
  const sizes = withSizes ? Float64Array.from(names, (_, i) => (i % 5 === 0 ? -1 : i * 1000 + 0.5 * (i % 2))) : null;
  return { names, types, sizes };
}

describe('listingJson (list_dir writes its JSON text itself)', () => {
  const shownPaths = ['.', 'src', 'a "quoted" dir', 'back\\slash/deeper', 'ctl\u0001dir', 'sur\ud800rogate', 'ünï'];
  for (const shown of shownPaths) {
    for (const withSizes of [false, true]) {
      it(`is exactly JSON.stringify of the object form — shown ${JSON.stringify(shown)}, sizes ${withSizes}`, () => {
        const raw = listing(AWKWARD, withSizes);
        for (const limit of [0, 1, 5, AWKWARD.length - 1, AWKWARD.length, 1000]) {
          const { text, truncated } = listingJson(shown, raw, limit);
          expect(text.json).toBe(viaObjects(shown, raw, limit));
          expect(truncated).toBe(AWKWARD.length > limit);
          // and it is JSON a client can read back to the same names
          const back = JSON.parse(text.json) as { entries: { path: string }[] };
          const prefix = shown === '.' ? '' : `${shown}/`;
          expect(back.entries.map((e) => e.path)).toEqual(AWKWARD.slice(0, limit).map((n) => prefix + n));
        }
      });
    }
  }

  it('gives an empty directory an empty entries array', () => {
    const { text, truncated } = listingJson('empty', { names: [], types: new Uint8Array(0), sizes: null }, 1000);
    expect(text.json).toBe('{"path":"empty","entries":[],"truncated":false}');
    expect(truncated).toBe(false);
  });
});
