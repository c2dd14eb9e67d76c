/** The Sources tab: the remote A2A agents whose skills are tools — state, tools, last error, last fetch. */
import { api, type AgentStatus } from './api.js';
import { fill, h } from './dom.js';

export function sourcesView(root: HTMLElement): { load(): Promise<void> } {
  const status = h('p', { class: 'muted', role: 'status' });
  const list = h('div', { class: 'agents' });
  const refresh = h('button', { type: 'button', onclick: () => void load() }, 'Refresh');
  fill(root, h('div', { class: 'activity-head' }, h('h2', {}, 'Sources'), refresh), h('h3', {}, 'A2A agents'), status, list);

  const load = async () => {
    refresh.disabled = true;
    try {
      const { agents } = await api.agents();
      fill(status, agents.length ? `${agents.length} agent${agents.length === 1 ? '' : 's'} · read ${new Date().toLocaleTimeString()}` : 'No A2A agents are configured (agents: in the config).');
      fill(list, agents.map(card));
    } catch (err) {
      fill(status, `Cannot read the agents: ${(err as Error).message}`);
    } finally {
      refresh.disabled = false;
    }
  };
  return { load };
}

function card(a: AgentStatus): HTMLElement {
  const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');
  return h(
    'article',
    { class: `agent state-${a.state}` },
    h('h4', {}, a.name, ' ', h('span', { class: `pill pill-${a.state}` }, a.state), a.agent_name ? h('span', { class: 'muted' }, ` ${a.agent_name}`) : null),
    h(
      'dl',
      { class: 'meta' },
      h('dt', {}, 'Card'),
      h('dd', {}, h('code', {}, a.card)),
      h('dt', {}, 'Endpoint'),
      h('dd', {}, a.endpoint ? h('code', {}, a.endpoint) : '—'),
      h('dt', {}, 'Dialect'),
      h('dd', {}, a.dialect ?? '—', a.streaming ? ' · streaming' : ''),
      h('dt', {}, 'Last fetch'),
      h('dd', {}, when(a.last_fetched), a.last_attempt && a.last_attempt !== a.last_fetched ? ` (last try ${when(a.last_attempt)})` : ''),
      h('dt', {}, 'Tools'),
      h('dd', {}, a.tools.length ? a.tools.join(', ') : 'none'),
      a.skipped.length ? [h('dt', {}, 'Skipped'), h('dd', {}, a.skipped.map((s) => `${s.tool} (kept by ${s.kept_by})`).join(', '))] : null,
    ),
    a.last_error ? h('p', { class: 'error' }, `Last error: ${a.last_error}`) : null,
  );
}
