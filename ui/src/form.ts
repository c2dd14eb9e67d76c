/**
 * A form generated from a tool's input_parameters. The gateway is the one
 * validator (the same compiled check every call goes through), so the form
 * never disagrees with it: it turns what was typed into JSON values as they
 * are — "abc" in an integer field is sent as the string "abc" — and shows the
 * problems of the gateway's 422 answer under the fields they name.
 * The same form edits a waiting call's arguments in the Approvals tab, filled with them (`initial`).
 */
import type { Problem, ToolParameter } from './api.js';
import { h, uid } from './dom.js';

interface Field {
  /** The problem path this field answers to, e.g. "arguments.options.depth". */
  path: string;
  /** The value to send; undefined = leave the argument out. A string problem = cannot be sent as typed. */
  read(): { value?: unknown; problem?: string };
  showError(message: string | null): void;
  focus(): void;
}

export interface GeneratedForm {
  element: HTMLElement;
  /** The arguments, or the problems that keep them from being sent (only malformed JSON). */
  read(): { args: Record<string, unknown>; problems: Problem[] };
  /** Show problems next to their fields; returns those no field claims. Focuses the first one. */
  showProblems(problems: Problem[]): Problem[];
}

/** `initial`: the values to fill the fields with (arguments as a call sent them). */
export function generateForm(params: readonly ToolParameter[], initial?: Record<string, unknown>): GeneratedForm {
  const fields: Field[] = [];
  const root = objectFields(params, 'arguments', fields, initial);
  const element = h(
    'div',
    { class: 'fields' },
    params.length ? root.elements : h('p', { class: 'muted' }, 'This tool takes no arguments.'),
  );
  return {
    element,
    read() {
      for (const f of fields) f.showError(null);
      const { value, problems } = root.read();
      return { args: (value as Record<string, unknown> | undefined) ?? {}, problems };
    },
    showProblems(problems) {
      for (const f of fields) f.showError(null);
      const byPath = new Map(fields.map((f) => [f.path, f]));
      const messages = new Map<Field, string[]>();
      const unclaimed: Problem[] = [];
      for (const p of problems) {
        // An unknown key inside a nested object names the object; walk up to the nearest field.
        let path = p.path;
        let field = byPath.get(path);
        while (!field && path.includes('.')) field = byPath.get((path = path.slice(0, path.lastIndexOf('.'))));
        if (!field) {
          unclaimed.push(p);
          continue;
        }
        const prefix = field.path === p.path ? '' : `${p.path.slice(field.path.length + 1)}: `;
        messages.set(field, [...(messages.get(field) ?? []), prefix + p.message]);
      }
      let first: Field | undefined;
      for (const f of fields) {
        const m = messages.get(f);
        if (!m) continue;
        f.showError(m.join('; '));
        first ??= f;
      }
      first?.focus();
      return unclaimed;
    },
  };
}

/** The fields of an object's properties; reads them into one object (undefined when nothing was given). */
function objectFields(
  params: readonly ToolParameter[],
  path: string,
  fields: Field[],
  initial: Record<string, unknown> | undefined,
) {
  const children = params.map((p) => ({ p, ...parameterField(p, `${path}.${p.name}`, fields, initial?.[p.name]) }));
  return {
    elements: children.map((c) => c.element),
    read(): { value?: Record<string, unknown>; problems: Problem[] } {
      const value: Record<string, unknown> = {};
      const problems: Problem[] = [];
      let given = false;
      for (const c of children) {
        const r = c.read();
        problems.push(...r.problems);
        if (r.value !== undefined) {
          value[c.p.name] = r.value;
          given = true;
        }
      }
      return { value: given ? value : undefined, problems };
    },
  };
}

function parameterField(
  p: ToolParameter,
  path: string,
  fields: Field[],
  initial: unknown,
): { element: HTMLElement; read(): { value?: unknown; problems: Problem[] } } {
  const id = uid('f');
  const helpId = `${id}-help`;
  const errorId = `${id}-error`;
  const required = p.required === true;
  const help = p.description ? h('p', { class: 'help', id: helpId }, p.description) : null;
  const error = h('p', { class: 'error', id: errorId, hidden: true });
  const describedBy = [help ? helpId : null, errorId].filter(Boolean).join(' ');
  const typeNote = h('span', { class: 'type' }, p.enum?.length ? `${p.type}, one of ${p.enum.length}` : p.type);
  const mark = required
    ? [h('span', { class: 'req', 'aria-hidden': 'true' }, '*'), h('span', { class: 'sr-only' }, ' (required)')]
    : [];

  if (p.type === 'object' && p.properties && Object.keys(p.properties).length > 0) {
    const nested = objectFields(Object.values(p.properties), path, fields, isObject(initial) ? initial : undefined);
    const legend = h('legend', {}, h('span', { class: 'name' }, p.name), mark, ' ', typeNote);
    const element = h(
      'fieldset',
      { class: 'field nested', 'aria-describedby': describedBy },
      legend,
      help,
      error,
      nested.elements,
    );
    fields.push({
      path,
      read: () => ({}),
      showError: (m) => setError(error, element, m),
      focus: () => (element.querySelector<HTMLElement>('input, select, textarea') ?? element).focus(),
    });
    return {
      element,
      read() {
        const r = nested.read();
        // A required object is sent even when empty, so the gateway names its missing members.
        return { value: r.value ?? (required ? {} : undefined), problems: r.problems };
      },
    };
  }

  const common = { id, name: path, 'aria-describedby': describedBy, 'aria-required': required ? 'true' : null };
  let control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
  let read: () => { value?: unknown; problem?: string };
  const numeric = p.type === 'integer' || p.type === 'number';
  if (p.enum && p.enum.length > 0) {
    const select = h(
      'select',
      common,
      h('option', { value: '' }, required ? '— choose —' : '— not set —'),
      p.enum.map((v) => h('option', { value: v }, v)),
    );
    control = select;
    if (initial !== undefined) select.value = String(initial);
    read = () => (select.value === '' ? {} : { value: numeric ? Number(select.value) : select.value });
  } else if (p.type === 'boolean') {
    const select = h(
      'select',
      common,
      h('option', { value: '' }, '— not set —'),
      h('option', { value: 'true' }, 'true'),
      h('option', { value: 'false' }, 'false'),
    );
    control = select;
    if (initial !== undefined) select.value = String(initial);
    read = () => (select.value === '' ? {} : { value: select.value === 'true' });
  } else if (p.type === 'array' || p.type === 'object') {
    const area = h('textarea', {
      ...common,
      rows: 3,
      spellcheck: 'false',
      placeholder: p.type === 'array' ? '["a", "b"]' : '{"key": "value"}',
    });
    control = area;
    if (initial !== undefined) area.value = JSON.stringify(initial, null, 2);
    read = () => {
      const text = area.value.trim();
      if (text === '') return {};
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { problem: `not valid JSON: write a JSON ${p.type}, e.g. ${area.placeholder}` };
      }
    };
  } else {
    const input = h('input', {
      ...common,
      type: 'text',
      inputmode: p.type === 'integer' ? 'numeric' : p.type === 'number' ? 'decimal' : null,
      autocomplete: 'off',
      spellcheck: numeric ? 'false' : null,
    });
    control = input;
    if (initial !== undefined) input.value = typeof initial === 'string' ? initial : JSON.stringify(initial);
    read = () => {
      const text = numeric ? input.value.trim() : input.value;
      if (text === '') return {};
      // A number as typed; anything else goes as the string it is, and the gateway says what it expected.
      if (numeric && /^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text)) return { value: Number(text) };
      return { value: text };
    };
  }
  const label = h('label', { for: id }, h('span', { class: 'name' }, p.name), mark, ' ', typeNote);
  const element = h('div', { class: 'field' }, label, control, help, error);
  const field: Field = {
    path,
    read,
    showError: (m) => setError(error, control, m),
    focus: () => control.focus(),
  };
  fields.push(field);
  return {
    element,
    read() {
      const r = read();
      if (r.problem) {
        field.showError(r.problem);
        return { problems: [{ path, message: r.problem }] };
      }
      return { value: r.value, problems: [] };
    },
  };
}

function setError(error: HTMLElement, control: HTMLElement, message: string | null): void {
  error.textContent = message ?? '';
  error.hidden = message === null;
  if (message === null) control.removeAttribute('aria-invalid');
  else control.setAttribute('aria-invalid', 'true');
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
