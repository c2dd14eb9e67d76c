/**
 * The Approvals tab (approvers only): calls waiting for a person, live from GET /admin/events (its snapshot lists
 * them, approval.pending / approval.decided follow), each with tool, caller, arguments as formatted JSON, the time
 * left, a reason, an argument editor, and Approve / Deny (POST /admin/approvals/{id}).
 * The editor is the Tools tab's generated form (form.ts), filled with the call's arguments; JSON when the tool's
 * definition is not listed for this token or the arguments do not fit the form (keys it has no field for).
 */
import { api, ApiError, type SseMessage, type ToolParameter } from './api.js';
import { fill, h, uid } from './dom.js';
import { generateForm, type GeneratedForm } from './form.js';
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
    const original = JSON.stringify(a.arguments, null, 2);
    editor.value = original;
    const jsonBox = h(
      'div',
      { class: 'field' },
      h('label', { for: argsId }, 'Arguments to approve (JSON; edit to change them)'),
      editor,
    );
    const formBox = h('fieldset', { class: 'args-form', hidden: true });
    const note = h('p', { class: 'muted small' });
    const error = h('p', { class: 'error', role: 'alert' });
    /** The generated form, while it is the editor (undefined: the JSON one). */
    let form: GeneratedForm | undefined;
    let params: readonly ToolParameter[] = [];
    const toggle = h('button', { type: 'button', class: 'small toggle', hidden: true, onclick: () => switchEditor() });
    /** Show the form filled with `args`, unless it cannot hold them as they are. */
    const useForm = (args: Record<string, unknown>): boolean => {
      const candidate = generateForm(params, args);
      const read = candidate.read();
      if (read.problems.length > 0 || canonical(read.args) !== canonical(args)) return false;
      form = candidate;
      fill(formBox, h('legend', {}, 'Arguments to approve (edit to change them)'), candidate.element);
      formBox.hidden = false;
      jsonBox.hidden = true;
      fill(toggle, 'Edit as JSON');
      fill(note);
      return true;
    };
    const useJson = (args: Record<string, unknown> | undefined) => {
      if (args) editor.value = JSON.stringify(args, null, 2);
      form = undefined;
      formBox.hidden = true;
      jsonBox.hidden = false;
      fill(toggle, 'Edit in the form');
    };
    const switchEditor = () => {
      fill(error);
      if (form) {
        const { args, problems } = form.read();
        if (problems.length) return void form.showProblems(problems);
        return useJson(args);
      }
      const args = parseArgs(editor.value);
      if (typeof args === 'string') return void fill(error, args);
      if (!useForm(args))
        fill(error, 'These arguments do not fit the form (it has no field for some of them); edit them as JSON.');
    };
    void definitionOf(a.tool_name).then((tool) => {
      if (!tool) return void fill(note, 'The tool is not listed for your token: edit the arguments as JSON.');
      params = tool.input_parameters ?? [];
      toggle.hidden = false;
      // Typed into already: keep the JSON editor (the toggle offers the form).
      if (editor.value !== original) return useJson(undefined);
      if (!useForm(a.arguments)) {
        useJson(undefined);
        fill(note, 'The form has no field for some of these arguments: edit them as JSON.');
      }
    });
    const left = h('span', { class: 'left muted' });
    const tick = () => fill(left, timeLeft(a.expires_at - Date.now() / 1000));
    tick();
    ticks.set(a.id, tick);
    const decide = async (decision: 'approve' | 'deny') => {
      fill(error);
      let edited: Record<string, unknown> | undefined;
      if (decision === 'approve') {
        let args: Record<string, unknown>;
        if (form) {
          const read = form.read();
          if (read.problems.length) return void form.showProblems(read.problems);
          args = read.args;
        } else {
          const parsed = parseArgs(editor.value);
          if (typeof parsed === 'string') return void fill(error, parsed);
          args = parsed;
        }
        if (canonical(args) !== canonical(a.arguments)) edited = args;
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
        // An edit the tool refuses: its problems under the form's fields, the rest as text.
        const unclaimed = form && err instanceof ApiError ? form.showProblems(err.problems) : [];
        if (!form || !(err instanceof ApiError) || err.problems.length === 0 || unclaimed.length > 0)
          fill(error, (err as Error).message);
        else fill(error, `The gateway refused the edited arguments (${err.code}); see the fields marked above.`);
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
      formBox,
      jsonBox,
      toggle,
      note,
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

/** The tool's definition as this token lists it (deferred ones too), or undefined. */
async function definitionOf(name: string) {
  try {
    const { tools } = await api.list(name, '', [], true);
    return tools.find((t) => t.name === name);
  } catch {
    return undefined;
  }
}

/** The arguments typed as JSON, or what is wrong with them. */
function parseArgs(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'The arguments are not valid JSON.';
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : 'The arguments must be a JSON object.';
}

/** JSON with object keys sorted: the same arguments whatever order a form or a person wrote them in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/** "14 m 05 s left", "42 s left", "expired". */
function timeLeft(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s === 0) return 'expired';
  return s >= 60 ? `${Math.floor(s / 60)} m ${String(s % 60).padStart(2, '0')} s left` : `${s} s left`;
}
