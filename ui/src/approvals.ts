/**
 * The Approvals tab (approvers only): calls waiting for a person, live from GET /admin/events (its snapshot lists
 * them, approval.pending / approval.decided follow), each with tool, caller, arguments as formatted JSON, the time
 * left, a reason, an argument editor, and Approve / Deny (POST /admin/approvals/{id}).
 */
import { api, ApiError, type SseMessage } from './api.js';
import { fill, h, uid } from './dom.js';
import { jsonView } from './json.js';

interface Approval {
  id: string;
  call_id: string;
  tool_name: string;
  arguments: Record<string, unknown>;
  principal: string | null;
  door: string;
  correlation_id: string;
  rule: string;
  expires_at: number;
}

export function approvalsView(root: HTMLElement, badge: HTMLElement): { onMessage(m: SseMessage): void } {
  const list = h('ul', { class: 'approvals', 'aria-label': 'Calls waiting for approval' });
  fill(
    root,
    h('h2', {}, 'Approvals'),
    h('p', { class: 'muted' }, 'Calls that wait for a person. Nobody approves their own call.'),
    list,
  );
  const pending = new Map<string, Approval>();
  /** Each card's "time left" updater. */
  const ticks = new Map<string, () => void>();

  const card = (a: Approval) => {
    const reasonId = uid('reason');
    const argsId = uid('args');
    const reason = h('input', {
      id: reasonId,
      type: 'text',
      placeholder: 'Shown to the caller when denied; kept in the audit',
    });
    const editor = h('textarea', { id: argsId, rows: 6, spellcheck: 'false', class: 'args-editor' });
    editor.value = JSON.stringify(a.arguments, null, 2);
    const error = h('p', { class: 'error', role: 'alert' });
    const left = h('span', { class: 'left muted' });
    const tick = () => fill(left, `${Math.max(0, Math.round(a.expires_at - Date.now() / 1000))} s left`);
    tick();
    ticks.set(a.id, tick);
    const decide = async (decision: 'approve' | 'deny') => {
      fill(error);
      let edited: Record<string, unknown> | undefined;
      if (decision === 'approve' && editor.value.trim() !== JSON.stringify(a.arguments, null, 2)) {
        try {
          edited = JSON.parse(editor.value) as Record<string, unknown>;
        } catch {
          return void fill(error, 'The arguments are not valid JSON.');
        }
      }
      try {
        await api.request('POST', `admin/approvals/${encodeURIComponent(a.id)}`, {
          decision,
          ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
          ...(edited ? { arguments: edited } : {}),
        });
        pending.delete(a.id);
        render();
      } catch (err) {
        fill(error, (err as ApiError).message);
      }
    };
    return h(
      'li',
      { class: 'approval', 'data-approval-id': a.id, 'data-call-id': a.call_id },
      h(
        'div',
        { class: 'approval-head' },
        h('span', { class: 'name' }, a.tool_name),
        h('span', { class: 'caller' }, a.principal ?? 'anonymous'),
        h('span', { class: 'muted' }, `via ${a.door}`),
        left,
      ),
      h('p', { class: 'muted small' }, `rule ${a.rule}`, a.correlation_id ? ` · correlation ${a.correlation_id}` : ''),
      jsonView(a.arguments, 'arguments'),
      h('div', { class: 'field' }, h('label', { for: argsId }, 'Arguments to approve (edit to change them)'), editor),
      h('div', { class: 'field' }, h('label', { for: reasonId }, 'Reason'), reason),
      error,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'primary approve', onclick: () => void decide('approve') }, 'Approve'),
        h('button', { type: 'button', class: 'deny', onclick: () => void decide('deny') }, 'Deny'),
      ),
    );
  };

  const cards = new Map<string, HTMLElement>();
  const render = () => {
    for (const [id, el] of cards) {
      if (pending.has(id)) continue;
      el.remove();
      cards.delete(id);
      ticks.delete(id);
    }
    for (const a of pending.values()) if (!cards.has(a.id)) cards.set(a.id, card(a));
    fill(list, pending.size ? [...cards.values()] : h('li', { class: 'muted empty' }, 'Nothing waits for approval.'));
    badge.textContent = pending.size ? String(pending.size) : '';
    badge.setAttribute('aria-label', `${pending.size} waiting for approval`);
  };
  render();
  setInterval(() => {
    for (const tick of ticks.values()) tick();
  }, 1000);

  return {
    onMessage(m) {
      if (m.event === 'snapshot') {
        const approvals = (JSON.parse(m.data) as { approvals?: Approval[] }).approvals;
        if (!approvals) return;
        pending.clear();
        for (const a of approvals) pending.set(a.id, a);
      } else if (m.event === 'approval.pending') {
        const a = JSON.parse(m.data) as Approval;
        pending.set(a.id, a);
      } else if (m.event === 'approval.decided') {
        pending.delete((JSON.parse(m.data) as { id: string }).id);
      } else {
        return;
      }
      render();
    },
  };
}
