/** The console: tabs, the token prompt when auth is on, and the three views. */
import { activityView } from './activity.js';
import { approvalsView } from './approvals.js';
import { api, ApiError } from './api.js';
import { fill, h, uid } from './dom.js';
import { sourcesView } from './sources.js';
import { toolsView } from './tools.js';

const $ = (id: string) => document.getElementById(id)!;
const TABS = ['tools', 'activity', 'approvals', 'sources'] as const;
type Tab = (typeof TABS)[number];

const tools = toolsView($('tools'));
const approvals = approvalsView($('approvals'), $('approvals-badge'));
const activity = activityView($('activity'), $('running-badge'), (m) => approvals.onMessage(m));
const sources = sourcesView($('sources'));

function showTab(tab: Tab, focus = false): void {
  for (const t of TABS) {
    const button = $(`tab-${t}`);
    button.setAttribute('aria-selected', String(t === tab));
    button.tabIndex = t === tab ? 0 : -1;
    $(t).hidden = t !== tab;
  }
  if (focus) $(`tab-${tab}`).focus();
  if (tab === 'sources') void sources.load();
  history.replaceState(null, '', `#${tab}`);
}

for (const [i, t] of TABS.entries()) {
  const button = $(`tab-${t}`);
  button.addEventListener('click', () => showTab(t));
  // Arrow keys move between tabs (the WAI-ARIA tabs pattern).
  button.addEventListener('keydown', (e) => {
    const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (step) showTab(TABS[(i + step + TABS.length) % TABS.length]!, true);
  });
}

/** Ask for a token (auth is on and there is none, or it was refused); the page reloads with it. */
function askToken(reason: string): void {
  const id = uid('token');
  const input = h('input', {
    id,
    type: 'password',
    autocomplete: 'off',
    required: true,
    'aria-describedby': `${id}-why`,
  });
  const error = h('p', { class: 'error', role: 'alert', id: `${id}-why` }, reason);
  const form = h(
    'form',
    {
      class: 'login',
      onsubmit: (e: Event) => {
        e.preventDefault();
        if (!input.value.trim())
          return void fill(error, 'Enter the token the gateway was configured with (auth.tokens).');
        api.setToken(input.value.trim());
        location.reload();
      },
    },
    h('h2', {}, 'This gateway needs a token'),
    h('p', {}, 'The console sends it as a bearer token and keeps it in this tab only (sessionStorage).'),
    h('div', { class: 'field' }, h('label', { for: id }, 'Access token'), input),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Use token'),
  );
  document.querySelector('nav')!.hidden = true;
  fill($('main'), form);
  input.focus();
}

let asked = false;
api.onAuthNeeded((e) => {
  if (asked) return;
  asked = true;
  const had = api.token !== null;
  api.setToken(null);
  askToken(had ? `The token was refused: ${e.message}` : 'Enter your access token to continue.');
});

async function boot(): Promise<void> {
  if (api.token) {
    fill(
      $('auth'),
      h(
        'button',
        { type: 'button', class: 'small', onclick: () => (api.setToken(null), location.reload()) },
        'Forget token',
      ),
    );
  }
  const hash = location.hash.slice(1);
  showTab((TABS as readonly string[]).includes(hash) ? (hash as Tab) : 'tools');
  try {
    await tools.load();
  } catch (err) {
    if (err instanceof ApiError && err.code === 'unauthorized') return; // the token prompt is up
    fill($('tools'), h('p', { class: 'error', role: 'alert' }, `Cannot load the tools: ${(err as Error).message}`));
    return;
  }
  activity.start();
  // The Approvals tab is an approver's: shown once GET /admin/approvals answers (403 for everyone else).
  api.request('GET', 'admin/approvals').then(
    () => ($('tab-approvals').hidden = false),
    () => undefined,
  );
  // Gateway-wide counters: shown on open gateways only (with auth a token sees its own tools and calls); tools this
  // host cannot offer (run_command without a sandbox), to everyone, so a tool missing from the list is explained.
  const health = async () => {
    try {
      const hl = await api.health();
      const unavailable = (hl.unavailable_tools ?? []).map((u) =>
        h('span', { class: 'unavailable', role: 'status' }, `${u.name} is unavailable: ${u.reason}`),
      );
      fill($('health'), api.token ? '' : `${hl.tools} tools registered`, ...unavailable);
    } catch {
      if (!api.token) fill($('health'), 'gateway unreachable');
    }
  };
  void health();
  setInterval(() => void health(), 30_000);
}

void boot();
