/** A JSON viewer: objects and arrays fold (details/summary, so keyboard and screen readers work), scalars are coloured. */
import { h } from './dom.js';

const MAX_OPEN_DEPTH = 2;

export function jsonView(value: unknown, label?: string): HTMLElement {
  return h('div', { class: 'json' }, node(value, label, 0));
}

function node(value: unknown, key: string | undefined, depth: number): HTMLElement {
  const keyEl = key === undefined ? null : h('span', { class: 'j-key' }, `${key}: `);
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    const brackets = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
    if (entries.length === 0) return h('div', { class: 'j-line' }, keyEl, `${brackets[0]}${brackets[1]}`);
    const summary = h(
      'summary',
      {},
      keyEl,
      h(
        'span',
        { class: 'muted' },
        `${brackets[0]} ${entries.length} ${Array.isArray(value) ? 'item' : 'key'}${entries.length === 1 ? '' : 's'} ${brackets[1]}`,
      ),
    );
    const details = h(
      'details',
      { open: depth < MAX_OPEN_DEPTH },
      summary,
      h(
        'div',
        { class: 'j-children' },
        entries.map(([k, v]) => node(v, k, depth + 1)),
      ),
    );
    return details;
  }
  const type = value === null ? 'null' : typeof value;
  return h(
    'div',
    { class: 'j-line' },
    keyEl,
    h('span', { class: `j-${type}` }, JSON.stringify(value) ?? String(value)),
  );
}
