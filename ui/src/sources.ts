/**
 * The Sources tab: where the tools come from — every source in one table (GET /sources: native groups, plugins,
 * A2A agents, MCP servers, OpenAPI documents), then the details of the remote A2A agents (GET /agents) and the MCP
 * servers (GET /mcp-servers): state, tools, last error, last fetch or start.
 */
import { api, type AgentStatus, type McpServerStatus, type SourceStatus } from './api.js';
import { fill, h } from './dom.js';

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

export function sourcesView(root: HTMLElement): { load(): Promise<void> } {
  const allStatus = h('p', { class: 'muted', role: 'status' });
  const allTable = h('div', {});
  const agentsStatus = h('p', { class: 'muted', role: 'status' });
  const agentsList = h('div', { class: 'agents' });
  const serversStatus = h('p', { class: 'muted', role: 'status' });
  const serversList = h('div', { class: 'agents' });
  const refresh = h('button', { type: 'button', onclick: () => void load() }, 'Refresh');
  fill(
    root,
    h('div', { class: 'activity-head' }, h('h2', {}, 'Sources'), refresh),
    h(
      'section',
      { 'aria-labelledby': 'sources-all' },
      h('h3', { id: 'sources-all' }, 'All sources'),
      allStatus,
      allTable,
    ),
    h(
      'section',
      { 'aria-labelledby': 'sources-agents' },
      h('h3', { id: 'sources-agents' }, 'A2A agents'),
      agentsStatus,
      agentsList,
    ),
    h(
      'section',
      { 'aria-labelledby': 'sources-mcp' },
      h('h3', { id: 'sources-mcp' }, 'MCP servers'),
      serversStatus,
      serversList,
    ),
  );

  // Each list is read on its own: one that cannot be read does not hide the other.
  const loadAll = async () => {
    try {
      const { sources } = await api.sources();
      fill(allStatus, `${plural(sources.length, 'source')} · read ${new Date().toLocaleTimeString()}`);
      fill(allTable, sourcesTable(sources));
    } catch (err) {
      fill(allStatus, `Cannot read the sources: ${(err as Error).message}`);
    }
  };
  const loadAgents = async () => {
    try {
      const { agents } = await api.agents();
      fill(
        agentsStatus,
        agents.length
          ? `${plural(agents.length, 'agent')} · read ${new Date().toLocaleTimeString()}`
          : 'No A2A agents are configured (agents: in the config).',
      );
      fill(agentsList, agents.map(agentCard));
    } catch (err) {
      fill(agentsStatus, `Cannot read the agents: ${(err as Error).message}`);
    }
  };
  const loadServers = async () => {
    try {
      const { servers } = await api.mcpServers();
      fill(
        serversStatus,
        servers.length
          ? `${plural(servers.length, 'server')} · read ${new Date().toLocaleTimeString()}`
          : 'No MCP servers are configured (mcp.servers: in the config).',
      );
      fill(serversList, servers.map(serverCard));
    } catch (err) {
      fill(serversStatus, `Cannot read the MCP servers: ${(err as Error).message}`);
    }
  };
  const load = async () => {
    refresh.disabled = true;
    try {
      await Promise.all([loadAll(), loadAgents(), loadServers()]);
    } finally {
      refresh.disabled = false;
    }
  };
  return { load };
}

function sourcesTable(sources: SourceStatus[]): HTMLElement {
  return h(
    'table',
    { class: 'sources' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Source', 'Kind', 'Health', 'Tools', 'Last refresh', 'Last error'].map((t) => h('th', { scope: 'col' }, t)),
      ),
    ),
    h(
      'tbody',
      {},
      ...sources.map((s) =>
        h(
          'tr',
          { 'data-source': s.id },
          h('td', {}, s.id),
          h('td', {}, s.kind),
          h('td', {}, h('span', { class: `pill pill-${s.health}` }, s.health)),
          h('td', {}, String(s.tool_count)),
          h('td', {}, when(s.last_refresh)),
          h('td', { class: s.last_error ? 'error' : 'muted' }, s.last_error ?? '—'),
        ),
      ),
    ),
  );
}

function agentCard(a: AgentStatus): HTMLElement {
  return h(
    'article',
    { class: `agent state-${a.state}` },
    h(
      'h4',
      {},
      a.name,
      ' ',
      h('span', { class: `pill pill-${a.state}` }, a.state),
      a.agent_name ? h('span', { class: 'muted' }, ` ${a.agent_name}`) : null,
    ),
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
      h(
        'dd',
        {},
        when(a.last_fetched),
        a.last_attempt && a.last_attempt !== a.last_fetched ? ` (last try ${when(a.last_attempt)})` : '',
      ),
      h('dt', {}, 'Tools'),
      h('dd', {}, a.tools.length ? a.tools.join(', ') : 'none'),
      a.skipped.length
        ? [h('dt', {}, 'Skipped'), h('dd', {}, a.skipped.map((s) => `${s.tool} (kept by ${s.kept_by})`).join(', '))]
        : null,
    ),
    a.last_error ? h('p', { class: 'error' }, `Last error: ${a.last_error}`) : null,
  );
}

function serverCard(s: McpServerStatus): HTMLElement {
  return h(
    'article',
    { class: `mcp-server state-${s.state}`, 'data-server': s.id },
    h(
      'h4',
      {},
      s.id,
      ' ',
      h('span', { class: `pill pill-${s.state}` }, s.state),
      s.server_name ? h('span', { class: 'muted' }, ` ${s.server_name}`) : null,
    ),
    h(
      'dl',
      { class: 'meta' },
      h('dt', {}, 'Transport'),
      h(
        'dd',
        {},
        s.transport,
        s.transport === 'stdio' ? (s.sandboxed ? ' · sandboxed' : ' · not sandboxed') : '',
        s.pid !== null ? ` · pid ${s.pid}` : '',
      ),
      h('dt', {}, s.transport === 'stdio' ? 'Command' : 'URL'),
      h('dd', {}, h('code', {}, s.target)),
      h('dt', {}, 'Last started'),
      h('dd', {}, when(s.last_started), s.restarts ? ` (${plural(s.restarts, 'restart')})` : ''),
      h('dt', {}, 'Tools'),
      h('dd', {}, s.tools.length ? s.tools.join(', ') : 'none'),
      s.skipped.length
        ? [h('dt', {}, 'Skipped'), h('dd', {}, s.skipped.map((k) => `${k.tool} (${k.reason})`).join(', '))]
        : null,
    ),
    s.last_error ? h('p', { class: 'error' }, `Last error: ${s.last_error}`) : null,
  );
}
