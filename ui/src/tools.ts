/** The Tools tab: search and filter (the gateway's own /tool/list search), a tool's definition, its generated form, its runs. */
import { api, ApiError, type ToolDefinition } from './api.js';
import { savedCall, watchCall, type CallView } from './call-view.js';
import { fill, h, uid } from './dom.js';
import { generateForm } from './form.js';
import { jsonView } from './json.js';

const CALL_KEY = 'a2e.call.tools';

export function toolsView(root: HTMLElement): { load(): Promise<void> } {
  const searchId = uid('search');
  const search = h('input', { id: searchId, type: 'search', placeholder: 'e.g. read a file', autocomplete: 'off' });
  const kindId = uid('kind');
  const kind = h('select', { id: kindId }, h('option', { value: '' }, 'All kinds'));
  const tagId = uid('tag');
  const tag = h('select', { id: tagId }, h('option', { value: '' }, 'All tags'));
  const deferredId = uid('deferred');
  const deferred = h('input', { id: deferredId, type: 'checkbox' });
  const count = h('p', { class: 'muted', role: 'status' });
  const list = h('ul', { class: 'tool-list', 'aria-label': 'Tools' });
  const detail = h(
    'div',
    { class: 'tool-detail' },
    h('p', { class: 'muted' }, 'Pick a tool to see its definition and run it.'),
  );

  fill(
    root,
    h('h2', { class: 'sr-only' }, 'Tools'),
    h(
      'div',
      { class: 'tools-layout' },
      h(
        'div',
        { class: 'tools-side' },
        h(
          'form',
          { class: 'filters', role: 'search', onsubmit: (e: Event) => e.preventDefault() },
          h('div', { class: 'field' }, h('label', { for: searchId }, 'Search tools'), search),
          h(
            'div',
            { class: 'row' },
            h('div', { class: 'field' }, h('label', { for: kindId }, 'Kind'), kind),
            h('div', { class: 'field' }, h('label', { for: tagId }, 'Tag'), tag),
          ),
          h('div', { class: 'check' }, deferred, h('label', { for: deferredId }, 'Include deferred tools in search')),
        ),
        count,
        list,
      ),
      detail,
    ),
  );

  let tools: ToolDefinition[] = [];
  let selected: string | undefined;
  let current: CallView | undefined;
  let generation = 0;

  const refresh = async () => {
    const mine = ++generation;
    try {
      const answer = await api.list(search.value, kind.value, tag.value ? [tag.value] : [], deferred.checked);
      if (mine !== generation) return; // a newer search answered first
      tools = answer.tools;
      renderList();
    } catch (err) {
      if (mine === generation) fill(count, `Cannot list tools: ${(err as Error).message}`);
    }
  };

  const renderList = () => {
    fill(
      count,
      `${tools.length} tool${tools.length === 1 ? '' : 's'}${search.value.trim() ? ` matching “${search.value.trim()}”` : ''}`,
    );
    fill(
      list,
      tools.map((t) =>
        h(
          'li',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'tool-item',
              'aria-current': t.name === selected ? 'true' : null,
              'data-tool': t.name,
              onclick: () => select(t, true),
            },
            h('span', { class: 'name' }, t.name),
            h('span', { class: 'desc' }, (t.description ?? '').split('\n')[0] ?? ''),
            h(
              'span',
              { class: 'chips' },
              h('span', { class: 'chip' }, t.kind ?? 'native'),
              (t.tags ?? []).map((x) => h('span', { class: 'chip' }, x)),
              t.defer_loading ? h('span', { class: 'chip' }, 'deferred') : null,
            ),
          ),
        ),
      ),
    );
  };

  const select = (tool: ToolDefinition, focus: boolean) => {
    selected = tool.name;
    for (const b of list.querySelectorAll<HTMLElement>('.tool-item')) {
      if (b.dataset.tool === tool.name) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    }
    current?.close();
    current = undefined;
    const form = generateForm(tool.input_parameters ?? []);
    const formError = h('div', { class: 'error', role: 'alert' });
    const timeoutId = uid('timeout');
    const timeout = h('input', { id: timeoutId, type: 'number', min: 1, step: 1, value: 30, inputmode: 'numeric' });
    const runBox = h('div', { class: 'run' });
    const run = h('button', { type: 'submit', class: 'primary' }, 'Run');
    const heading = h('h2', { tabindex: -1 }, tool.name);
    const el = h(
      'form',
      {
        novalidate: true,
        'aria-label': `Run ${tool.name}`,
        onsubmit: async (e: Event) => {
          e.preventDefault();
          fill(formError);
          const { args, problems } = form.read();
          if (problems.length) return void form.showProblems(problems);
          form.showProblems([]);
          run.disabled = true;
          try {
            const accepted = await api.startCall(tool.name, args, Math.max(1, Math.round(Number(timeout.value) || 30)));
            current?.close();
            current = watchCall(
              {
                call_id: accepted.call_id,
                tool_name: tool.name,
                events_url: accepted.events_url,
                result_url: accepted.result_url,
              },
              CALL_KEY,
            );
            fill(runBox, current.element);
          } catch (err) {
            const left = err instanceof ApiError ? form.showProblems(err.problems) : [];
            if (!(err instanceof ApiError) || err.problems.length === 0 || left.length > 0) {
              fill(formError, (err as Error).message);
            } else {
              fill(formError, `The gateway refused the arguments (${err.code}); see the fields marked above.`);
            }
          } finally {
            run.disabled = false;
          }
        },
      },
      h('h3', {}, 'Run'),
      form.element,
      h('div', { class: 'field narrow' }, h('label', { for: timeoutId }, 'Timeout (seconds)'), timeout),
      formError,
      run,
    );
    fill(
      detail,
      heading,
      h('p', { class: 'desc' }, tool.description ?? ''),
      h(
        'dl',
        { class: 'meta' },
        meta('Kind', tool.kind ?? 'native'),
        meta('Version', tool.version ?? ''),
        meta('Tags', (tool.tags ?? []).join(', ') || '—'),
        meta('Streaming', tool.streaming === false ? 'no' : 'yes'),
        meta('Idempotent', tool.idempotent ? 'yes' : 'no'),
        tool.toolkit ? meta('Toolkit', tool.toolkit) : null,
      ),
      h('details', { class: 'definition' }, h('summary', {}, 'Definition (JSON)'), jsonView(tool)),
      el,
      runBox,
    );
    if (focus) heading.focus();
    return runBox;
  };

  let timer: number | undefined;
  const later = () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => void refresh(), 120);
  };
  search.addEventListener('input', later);
  kind.addEventListener('change', () => void refresh());
  tag.addEventListener('change', () => void refresh());
  deferred.addEventListener('change', () => void refresh());

  return {
    async load() {
      const all = (await api.list('', '', [], false)).tools;
      const kinds = [...new Set(all.map((t) => t.kind ?? 'native'))].sort();
      const tags = [...new Set(all.flatMap((t) => t.tags ?? []))].sort();
      fill(
        kind,
        h('option', { value: '' }, 'All kinds'),
        kinds.map((k) => h('option', { value: k }, k)),
      );
      fill(
        tag,
        h('option', { value: '' }, 'All tags'),
        tags.map((t) => h('option', { value: t }, t)),
      );
      tools = all;
      renderList();
      // A call watched before a reload: show its tool and follow the call again.
      const saved = savedCall(CALL_KEY);
      const tool = saved && all.find((t) => t.name === saved.tool_name);
      if (saved && tool) {
        const box = select(tool, false);
        current = watchCall(saved, CALL_KEY);
        fill(box, current.element);
      }
    },
  };
}

function meta(name: string, value: string): HTMLElement[] {
  return [h('dt', {}, name), h('dd', {}, value)];
}
