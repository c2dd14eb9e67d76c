/**
 * Watches one call resource: its events from `events_url` (EventSource; the
 * URL carries the call's access token when auth is on) as a progress bar, a
 * status line, log lines and assembled artifacts, then the result. Each
 * event is shown once (by seq), and the call being watched is kept in
 * sessionStorage so a reload picks it up again.
 */
import { api, type ToolCallResponse, type ToolEvent } from './api.js';
import { duration, h } from './dom.js';
import { jsonView } from './json.js';

export interface WatchedCall {
  call_id: string;
  tool_name: string;
  events_url: string;
  result_url: string;
}

export interface CallView {
  element: HTMLElement;
  close(): void;
}

/** The call kept under `key` in sessionStorage (to resume after a reload). */
export function savedCall(key: string): WatchedCall | undefined {
  try {
    const v = JSON.parse(sessionStorage.getItem(key) ?? 'null') as WatchedCall | null;
    return v && typeof v.events_url === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

export function watchCall(call: WatchedCall, storageKey: string): CallView {
  sessionStorage.setItem(storageKey, JSON.stringify(call));
  const status = h('p', { class: 'status', role: 'status' }, 'Connecting…');
  const progress = h('progress', { max: 100, 'aria-label': 'Progress' });
  const progressText = h('span', { class: 'muted' });
  const elapsed = h('span', { class: 'muted' });
  const logs = h('ol', { class: 'logs', 'aria-label': 'Log lines' });
  const artifactsBox = h('div', { class: 'artifacts' });
  const resultBox = h('div', { class: 'result' });
  const cancel = h('button', { type: 'button', class: 'danger' }, 'Cancel call');
  const element = h(
    'div',
    { class: 'call', 'data-call-id': call.call_id },
    h(
      'div',
      { class: 'call-head' },
      h('h3', {}, call.tool_name, ' ', h('code', { class: 'muted' }, call.call_id.slice(0, 8))),
      cancel,
    ),
    status,
    h('div', { class: 'progress' }, progress, progressText, elapsed),
    h('h4', {}, 'Log'),
    logs,
    artifactsBox,
    resultBox,
  );

  let lastSeq = -1;
  let done = false;
  const artifacts = new Map<
    string,
    { mime: string; text: string; final: boolean; pre: HTMLElement; head: HTMLElement }
  >();
  // Elapsed since the call started at the gateway (its created_at), else since this view opened.
  let startedAt = Date.now();
  api.getCall(call.result_url).then(
    (r) => (startedAt = r.created_at * 1000),
    () => undefined,
  );
  const tick = setInterval(
    () => (elapsed.textContent = ` · ${duration(Math.max(0, Math.round(Date.now() - startedAt)))} elapsed`),
    1000,
  );

  const onEvent = (e: ToolEvent) => {
    const seq = e.seq ?? 0;
    if (seq <= lastSeq) return; // already shown (a replay after reconnect or reload)
    lastSeq = seq;
    const d = e.data as Record<string, unknown>;
    switch (e.kind) {
      case 'progress':
        progress.value = Number(d.pct);
        progressText.textContent = ` ${Number(d.pct)} %${d.message ? ` — ${String(d.message)}` : ''}`;
        status.textContent = `Running${d.message ? `: ${String(d.message)}` : ''}`;
        break;
      case 'status':
        status.textContent = `Running: ${String(d.message)}`;
        break;
      case 'log':
        logs.append(
          h(
            'li',
            { 'data-seq': seq },
            h('span', { class: `level level-${String(d.level)}` }, String(d.level)),
            ' ',
            String(d.message),
          ),
        );
        break;
      case 'artifact': {
        const name = String(d.name);
        let a = artifacts.get(name);
        if (!a) {
          const head = h('summary', {});
          const pre = h('pre', {});
          artifactsBox.append(h('details', { open: true, class: 'artifact' }, head, pre));
          artifacts.set(name, (a = { mime: String(d.mime), text: '', final: false, pre, head }));
        }
        a.text += String(d.chunk);
        a.final = d.final === true;
        a.pre.textContent = a.text;
        a.head.textContent = `Artifact ${name} (${a.mime}, ${a.text.length} chars${a.final ? '' : ', receiving…'})`;
        break;
      }
    }
  };

  const finish = (resp: ToolCallResponse) => {
    if (done) return;
    done = true;
    clearInterval(tick);
    elapsed.textContent = '';
    source.close();
    cancel.hidden = true;
    const r = resp.data;
    progress.value = 100;
    progressText.textContent = ' 100 %';
    progress.parentElement!.hidden = !r.success;
    status.textContent = r.success
      ? `Completed in ${duration(r.duration_ms)}`
      : `${r.error_code === 'tool_error' && /cancel/.test(r.error ?? '') ? 'Canceled' : 'Failed'} after ${duration(r.duration_ms)}: ${r.error ?? r.error_code ?? ''}`;
    element.classList.add(r.success ? 'ok' : 'failed');
    resultBox.replaceChildren(
      h('h4', {}, 'Result'),
      h(
        'p',
        { class: 'muted' },
        `Duration ${duration(r.duration_ms)}${r.truncated ? ' · truncated' : ''}${r.exit_code !== null && r.exit_code !== undefined ? ` · exit code ${r.exit_code}` : ''}`,
      ),
      jsonView(r.data, undefined),
    );
  };

  const source = new EventSource(call.events_url);
  source.addEventListener('open', () => {
    if (!done && lastSeq < 0) status.textContent = 'Running';
  });
  source.addEventListener('tool/event', (m) => onEvent(JSON.parse((m as MessageEvent<string>).data) as ToolEvent));
  source.addEventListener('tool/call/resp', (m) =>
    finish(JSON.parse((m as MessageEvent<string>).data) as ToolCallResponse),
  );
  source.addEventListener('error', () => {
    if (done || source.readyState !== EventSource.CLOSED) return;
    // The stream was refused (e.g. the call is gone): ask for the resource itself.
    api.getCall(call.result_url).then(
      (resource) =>
        resource.result
          ? finish(resource.result)
          : (status.textContent = 'The event stream closed; the call is still running.'),
      (err: Error) => {
        done = true;
        clearInterval(tick);
        status.textContent = `Cannot follow this call: ${err.message}`;
      },
    );
  });

  cancel.addEventListener('click', () => {
    cancel.disabled = true;
    status.textContent = 'Canceling…';
    api.cancel(call.result_url).catch((err: Error) => {
      cancel.disabled = false;
      status.textContent = `Cancel failed: ${err.message}`;
    });
  });

  return {
    element,
    close() {
      done = true;
      clearInterval(tick);
      source.close();
      sessionStorage.removeItem(storageKey);
    },
  };
}
