/**
 * The Live activity tab: calls in flight and recently finished, from the
 * gateway's GET /admin/events stream (a snapshot, then one event per
 * lifecycle change; reconnects resume with Last-Event-ID). A call resource
 * can be opened to watch its own events.
 */
import { followSse, type CallActivity, type SseMessage } from './api.js';
import { savedCall, watchCall, type CallView } from './call-view.js';
import { clock, duration, fill, h } from './dom.js';

const CALL_KEY = 'a2e.call.activity';
const KEEP_FINISHED = 50;
/** Not finished: running, or held for a person's approval. */
const inFlight = (a: CallActivity) => a.state === 'running' || a.state === 'awaiting_approval';

/** `also`: told every message of the stream too (the Approvals tab follows the same one). */
export function activityView(root: HTMLElement, badge: HTMLElement, also?: (m: SseMessage) => void): { start(): void } {
  const live = h('p', { class: 'live muted', role: 'status' }, 'Connecting…');
  const running = h('ul', { class: 'activity', 'aria-label': 'Running calls' });
  const finished = h('ul', { class: 'activity', 'aria-label': 'Recently finished calls' });
  const watchBox = h('div', { class: 'watch' });
  fill(
    root,
    h('div', { class: 'activity-head' }, h('h2', {}, 'Live activity'), live),
    h('h3', {}, 'In flight'),
    running,
    h('h3', {}, 'Recently finished'),
    finished,
    watchBox,
  );

  const calls = new Map<string, CallActivity>();
  let watching: CallView | undefined;
  let watchedId: string | undefined;

  const watch = (a: CallActivity, focus: boolean) => {
    if (!a.events_url || !a.result_url) return;
    watching?.close();
    watchedId = a.call_id;
    watching = watchCall(
      { call_id: a.call_id, tool_name: a.tool_name, events_url: a.events_url, result_url: a.result_url },
      CALL_KEY,
    );
    fill(watchBox, h('h3', { tabindex: -1 }, 'Watching a call'), watching.element);
    if (focus) watchBox.querySelector<HTMLElement>('h3')?.focus();
    render();
  };

  const row = (a: CallActivity) => {
    const caller = a.principal ?? (a.session_id ? `session ${a.session_id.slice(0, 8)}` : 'anonymous');
    const took = inFlight(a)
      ? `${duration(Math.max(0, Math.round(Date.now() - a.created_at * 1000)))} so far`
      : duration(a.duration_ms);
    const label = `${a.tool_name || '(no tool)'} · ${a.state}${a.error_code ? ` (${a.error_code})` : ''}`;
    return h(
      'li',
      { class: `act state-${a.state}`, 'data-call-id': a.call_id, 'data-state': a.state },
      h('span', { class: 'name' }, a.tool_name || '(no tool)'),
      h('span', { class: 'caller' }, caller),
      h(
        'span',
        { class: `pill pill-${a.state}` },
        a.state,
        a.error_code && a.state !== 'canceled' ? `: ${a.error_code}` : '',
      ),
      h('span', { class: 'when muted' }, clock(a.created_at)),
      h('span', { class: 'took' }, took),
      a.events_url
        ? h(
            'button',
            {
              type: 'button',
              class: 'small',
              'aria-label': `Watch ${label}`,
              'aria-pressed': a.call_id === watchedId ? 'true' : 'false',
              onclick: () => watch(a, true),
            },
            'Watch',
          )
        : h('span', { class: 'muted small' }, a.state === 'refused' ? 'refused' : 'no event stream'),
    );
  };

  const render = () => {
    const all = [...calls.values()];
    const now = all.filter(inFlight).sort((a, b) => a.created_at - b.created_at);
    const done = all.filter((a) => !inFlight(a)).sort((a, b) => b.ts - a.ts);
    for (const old of done.slice(KEEP_FINISHED)) calls.delete(old.call_id || `refused-${old.seq}`);
    fill(running, now.length ? now.map(row) : h('li', { class: 'muted empty' }, 'Nothing is running.'));
    fill(
      finished,
      done.length
        ? done.slice(0, KEEP_FINISHED).map(row)
        : h('li', { class: 'muted empty' }, 'No recently finished calls.'),
    );
    badge.textContent = now.length ? String(now.length) : '';
    badge.setAttribute('aria-label', `${now.length} running`);
  };

  const upsert = (a: CallActivity) => {
    const key = a.call_id || `refused-${a.seq}`;
    const known = calls.get(key);
    // A late "started" never overwrites the "finished" of the same call.
    if (known && !inFlight(known) && inFlight(a)) return;
    calls.set(key, {
      ...known,
      ...a,
      events_url: a.events_url ?? known?.events_url,
      result_url: a.result_url ?? known?.result_url,
    });
  };

  return {
    start() {
      render();
      const saved = savedCall(CALL_KEY);
      followSse('admin/events', {
        onMessage(m) {
          also?.(m);
          if (m.event === 'snapshot') {
            calls.clear();
            for (const a of (JSON.parse(m.data) as { calls: CallActivity[] }).calls) upsert(a);
          } else if (m.event.startsWith('call.')) {
            upsert(JSON.parse(m.data) as CallActivity);
          }
          render();
        },
        onState: (connected) => {
          fill(live, connected ? '● Live' : 'Reconnecting…');
          live.classList.toggle('on', connected);
        },
        onError: (e) => fill(live, `Not connected: ${e.message}`),
      });
      if (saved) {
        watchedId = saved.call_id;
        watching = watchCall(saved, CALL_KEY);
        fill(watchBox, h('h3', {}, 'Watching a call'), watching.element);
      }
      // Running calls' "so far" durations.
      setInterval(() => {
        if ([...calls.values()].some(inFlight)) render();
      }, 1000);
    },
  };
}
