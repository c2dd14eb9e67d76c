/**
 * approvals.notify: POST a summary of each new pending approval to a webhook (a team channel's), so someone hears
 * that a call waits. Outbound like http_request, so under its SSRF rules (tools.http.allow_hosts / allow_private);
 * retried with backoff; a failure is logged, never fatal, and never holds the call. The summary carries no
 * argument values (a channel is not an approver): the link leads to them.
 */
import type * as Undici from 'undici';
import type { Dispatcher } from 'undici';
import type { Approvals, Logger, PendingApproval } from './engine/index.js';
import { loadPackage } from './load-package.js';
import type { HttpConfig } from './tools/http/config.js';
import { AddressPolicy } from './tools/http/address.js';
import type { ApprovalsConfig } from './security/approvals-config.js';

/** First retry after this; doubled each time. */
const FIRST_RETRY_MS = 500;
const ATTEMPT_TIMEOUT_MS = 10_000;

export interface NotifyDeps {
  approvals: Approvals;
  /** The settings in force (a reload may change them). */
  settings: () => { approvals: ApprovalsConfig; http: HttpConfig };
  logger: Logger;
}

/** Start notifying; returns the function that stops (pending retries are dropped). */
export function notifyApprovals(deps: NotifyDeps): () => void {
  let agent: { key: string; dispatcher: Dispatcher } | undefined;
  // undici and the guarded agent are loaded by the first notification, not at start (like http_request's).
  const dispatcher = async (http: HttpConfig): Promise<Dispatcher> => {
    const key = JSON.stringify([http.allow_hosts, http.allow_private]);
    if (agent?.key !== key) {
      const { createGuardedAgent } = await import('./tools/http/dispatcher.js');
      void agent?.dispatcher.close();
      agent = {
        key,
        dispatcher: createGuardedAgent(
          new AddressPolicy({ allow_hosts: http.allow_hosts, allow_private: http.allow_private }),
        ),
      };
    }
    return agent.dispatcher;
  };
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const send = async (approval: PendingApproval, attempt: number): Promise<void> => {
    const { approvals: config, http } = deps.settings();
    const notify = config.notify;
    if (!notify || stopped) return;
    const target = new URL(notify.url);
    let failure: string;
    try {
      const { request } = await loadPackage<typeof Undici>('undici');
      const res = await request(target, {
        method: 'POST',
        dispatcher: await dispatcher(http),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(summary(approval, notify.console_url)),
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      await res.body.dump({ limit: 64 * 1024 }); // nothing of the answer is kept
      if (res.statusCode < 300) return;
      failure = `answered ${res.statusCode}`;
    } catch (err) {
      failure = reason(err);
    }
    if (attempt + 1 >= notify.attempts || stopped) {
      deps.logger.warn(
        { approval_id: approval.id, host: target.host, attempts: attempt + 1 },
        `approvals.notify: the webhook at ${target.host} was not told of a pending approval: ${failure}`,
      );
      return;
    }
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        void send(approval, attempt + 1);
      },
      FIRST_RETRY_MS * 2 ** attempt,
    );
    timer.unref();
    timers.add(timer);
  };

  const unwatch = deps.approvals.watch((change) => {
    if (change.type === 'approval.pending' && deps.settings().approvals.notify) void send(change.approval, 0);
  });
  return () => {
    stopped = true;
    unwatch();
    for (const t of timers) clearTimeout(t);
    void agent?.dispatcher.close();
  };
}

function summary(a: PendingApproval, consoleUrl: string | undefined) {
  return {
    type: 'approval.pending',
    text: `Tool "${a.call.toolName}" called by ${a.call.principal ?? 'an anonymous caller'} waits for approval (rule ${a.rule})`,
    id: a.id,
    tool_name: a.call.toolName,
    principal: a.call.principal,
    door: a.call.door,
    correlation_id: a.call.request.correlation_id,
    rule: a.rule,
    created_at: a.createdAt,
    expires_at: a.expiresAt,
    url: a.url,
    ...(consoleUrl ? { console_url: `${consoleUrl.replace(/\/+$/, '')}/ui/#approvals` } : {}),
  };
}

/** What went wrong, without stack or host paths: the refusal of the address policy, or the error's code. */
function reason(err: unknown): string {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: string }).code === 'A2E_REFUSED_ADDRESS') return (e as Error).message;
  }
  const code = (err as { code?: string })?.code;
  return code ? `request failed (${code})` : `request failed (${(err as Error)?.name ?? 'error'})`;
}
