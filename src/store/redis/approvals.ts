/**
 * Pending approvals shared through Redis (`store.kind: redis`): every instance lists every instance's pending
 * approvals, and an approver decides on any of them; the call itself stays on the instance holding it (its owner).
 *
 * - Held: the owner writes the summary (`approval:<id>`, JSON), indexes it (`approvals:pending`, by creation) and
 *   leases it (leases.ts, member `approval:<id>`) in one script, and tells every instance (`approvals:changes`).
 *   Decided, expired, canceled or settled there: removed (entry, index, lease), and told.
 * - Deciding elsewhere: the decider claims it (a script deleting the entry: exactly one decider gets 1), then
 *   publishes the decision on the owner's channel, like a DELETE's stop (calls.ts), and waits for the owner's
 *   reply: the owner applies it and answers on the decider's channel. Nobody subscribed on the owner's channel, or
 *   no reply within DELIVER_TIMEOUT_MS: the claim is undone (the entry goes back, while the owner's lease holds)
 *   and the approver gets a retryable error. A decision sent but not confirmed may still be applied when the owner
 *   resumes: the owner applies the first it receives and answers later ones not_found (one decision, never two).
 * - The owner lost: its leases lapse and the sweep removes its entries (and tells every instance); its call
 *   resources are failed by the same sweep (calls.ts).
 * - Redis lost its data: the owner's lease renewal finds the lease missing and writes the entry again.
 */
import { randomBytes } from 'node:crypto';
import {
  GatewayError,
  type ApprovalEvent,
  type ApprovalStore,
  type ApprovalSummary,
  type DeliveredDecision,
  type Logger,
} from '../../engine/index.js';
import { ERROR_CODES, type ErrorCode } from '../../protocol/index.js';
import type { RedisConnection } from './connection.js';
import { TAKE_LAPSED, type LeaseKind, type Leases } from './leases.js';
import { RedisScript } from './script.js';

/** Most pending approvals a listing reads (the oldest first). */
const LIST_MAX = 1000;
/** Largest message or entry read from Redis; a bigger one is not ours (or not sane) and is skipped. */
const MAX_READ_BYTES = 4 * 1024 * 1024;
/** How long a decider waits for the owner to confirm it applied the decision. */
const DELIVER_TIMEOUT_MS = 10_000;
/** Entries outlive their approval's own limit by this at most (the lease removes them long before when lost). */
const ENTRY_SLACK_S = 60;

/** `now`: Redis's clock in ms. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** Write a held call's entry, index and lease. KEYS: entry, index, leases. ARGV: id, json, ttl s, lease ms, member, created ms. */
const ADD = new RedisScript(`${NOW}
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[4]), ARGV[5])
return 1`);

/** The owner is done with it. KEYS: entry, index, leases. ARGV: id, member. */
const REMOVE = new RedisScript(`redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
return 1`);

/** Take the decision: 1 for exactly one decider. The lease stays (the owner removes it as it applies). KEYS: entry, index. ARGV: id. */
const CLAIM = new RedisScript(`local taken = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return taken`);

/** A claimed decision nobody received: back on the list, unless it is gone meanwhile. KEYS: entry, index, leases. ARGV: id, json, ttl s, member, created ms. */
const UNCLAIM = new RedisScript(`if not redis.call('ZSCORE', KEYS[3], ARGV[4]) then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3], 'NX')
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
return 1`);

/** The owner was lost: its entry leaves the list (once). KEYS: entry, index, leases. ARGV: id, member. → the entry's JSON, or false. */
const LAPSE = new RedisScript(`${TAKE_LAPSED}
if not lapsed(KEYS[3], ARGV[2]) then return false end
local entry = redis.call('GET', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return entry or ''`);

/** On a decider's reply channel. */
interface Reply {
  reply: string;
  ok: boolean;
  code?: string;
  message?: string;
}

/** On an owner's decide channel. */
interface Request {
  reply: string;
  from: string;
  decision: DeliveredDecision;
}

export interface RedisApprovalStoreOptions {
  redis: RedisConnection;
  leases: Leases;
  logger: Logger;
}

export class RedisApprovalStore implements ApprovalStore, LeaseKind {
  readonly prefix = 'approval:';
  readonly instance: string;
  private readonly redis: RedisConnection;
  private readonly leases: Leases;
  private readonly logger: Logger;
  /** The approvals held here, as written (re-written if Redis loses them). */
  private readonly mine = new Map<string, ApprovalSummary>();
  /** Each held approval's write, so its removal goes after it. */
  private readonly writes = new Map<string, Promise<void>>();
  /** Deciders waiting for an owner's reply, by reply id. */
  private readonly waiting = new Map<string, (reply: Reply) => void>();
  private readonly listeners = new Set<(event: ApprovalEvent) => void>();
  private apply: ((decision: DeliveredDecision) => void) | undefined;
  private closed = false;

  constructor(options: RedisApprovalStoreOptions) {
    this.redis = options.redis;
    this.leases = options.leases;
    this.logger = options.logger;
    // The connection's id, which the call store writes as its calls' owner: an instance's approvals and calls agree.
    this.instance = options.redis.instance;
  }

  /** Take part in the leases and listen (works with Redis down: the client subscribes once it is back). */
  start(): void {
    this.leases.register(this);
    void this.listen();
  }

  /** Stop listening: from now on a decision made elsewhere finds nobody subscribed here and is not claimed. */
  async close(): Promise<void> {
    this.closed = true;
    this.apply = undefined;
    await Promise.all([
      this.redis.unsubscribe(this.decideChannel(this.instance), this.onRequest),
      this.redis.unsubscribe(this.replyChannel(this.instance), this.onReply),
      this.redis.unsubscribe(this.changesChannel, this.onChange),
    ]);
  }

  add(summary: ApprovalSummary): void {
    this.mine.set(summary.id, summary);
    // Renewed from now on; a write that fails is made again by the renewal (the lease is missing).
    this.leases.hold(this.member(summary.id));
    const written = this.write(summary)
      .then(() => this.publish({ type: 'approval.pending', summary }))
      .catch((err: unknown) =>
        this.logger.warn(
          { approval_id: summary.id, error: (err as Error)?.message },
          'sharing a pending approval through Redis failed; other instances list it once Redis is back',
        ),
      );
    this.writes.set(summary.id, written);
  }

  remove(id: string, event: ApprovalEvent & { type: 'approval.decided' }): void {
    if (!this.mine.delete(id)) return;
    this.leases.release(this.member(id));
    const before = this.writes.get(id) ?? Promise.resolve();
    this.writes.delete(id);
    void before
      .then(() => REMOVE.run(this.redis.client, this.keys(id), [id, this.member(id)]))
      .then(() => this.publish(event))
      .catch((err: unknown) =>
        this.logger.warn(
          { approval_id: id, error: (err as Error)?.message },
          'removing a pending approval from Redis failed; it leaves the list when its lease lapses',
        ),
      );
  }

  async list(): Promise<ApprovalSummary[]> {
    return this.redis.run('listing pending approvals', async (c) => {
      const ids = await c.zRange(this.indexKey, 0, LIST_MAX - 1);
      if (!ids.length) return [];
      const entries = await c.mGet(ids.map((id) => this.entryKey(id)));
      return entries.flatMap((text) => {
        const summary = text === null ? undefined : parse<ApprovalSummary>(text);
        return summary ? [summary] : [];
      });
    });
  }

  async get(id: string): Promise<ApprovalSummary | undefined> {
    if (!isApprovalId(id)) return undefined; // no key is built from an id of another shape
    await this.written(id);
    const text = await this.redis.run('reading a pending approval', (c) => c.get(this.entryKey(id)));
    return text === null ? undefined : parse<ApprovalSummary>(text);
  }

  async claim(id: string): Promise<boolean> {
    await this.written(id);
    return this.redis.run(
      'deciding an approval',
      async (c) => Number(await CLAIM.run(c, [this.entryKey(id), this.indexKey], [id])) === 1,
    );
  }

  async deliver(summary: ApprovalSummary, decision: DeliveredDecision): Promise<void> {
    const reply = randomBytes(12).toString('base64url');
    const answered = new Promise<Reply>((resolve) => this.waiting.set(reply, resolve));
    let timer: NodeJS.Timeout | undefined;
    try {
      const request: Request = { reply, from: this.instance, decision };
      const heard = await this.redis.run('deciding an approval', (c) =>
        c.publish(this.decideChannel(summary.owner), JSON.stringify(request)),
      );
      if (Number(heard) === 0) {
        await this.unclaim(summary);
        throw new GatewayError(
          'unavailable',
          'the gateway instance holding this call does not answer (restarting or lost); nothing was decided. Retry shortly: ' +
            'if it was lost, its call fails within calls.owner_lease_s and leaves GET /admin/approvals',
          { retryable: true, detail: { retry_after_s: 1 } },
        );
      }
      const timeout = new Promise<undefined>(
        (resolve) => (timer = setTimeout(() => resolve(undefined), DELIVER_TIMEOUT_MS)),
      );
      const answer = await Promise.race([answered, timeout]);
      if (!answer) {
        // Listed again, so a decision the owner never receives (its connection dropped meanwhile) is not lost. Sent is
        // sent: the owner applies the first decision it receives and answers any later one not_found.
        await this.unclaim(summary);
        throw new GatewayError(
          'unavailable',
          `the gateway instance holding this call did not confirm the decision within ${DELIVER_TIMEOUT_MS / 1000} s; ` +
            'the approval is listed again, but that instance may still apply this decision when it resumes: ' +
            `GET /tool/calls/${summary.call_id} or GET /admin/approvals/${summary.id} tells`,
          { retryable: true, detail: { retry_after_s: 1 } },
        );
      }
      if (!answer.ok) {
        const code = (ERROR_CODES as readonly string[]).includes(answer.code ?? '')
          ? (answer.code as ErrorCode)
          : 'internal';
        throw new GatewayError(code, String(answer.message ?? 'the instance holding the call refused the decision'));
      }
    } finally {
      clearTimeout(timer);
      this.waiting.delete(reply);
    }
  }

  serve(apply: (decision: DeliveredDecision) => void): void {
    this.apply = apply;
  }

  watch(listener: (event: ApprovalEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** LeaseKind: the instance holding it was lost; it leaves the list (once, whichever instance sweeps). */
  async lapsed(member: string): Promise<void> {
    const id = member.slice(this.prefix.length);
    const entry = await LAPSE.run(this.redis.client, this.keys(id), [id, member]);
    if (typeof entry !== 'string') return;
    const summary = entry ? parse<ApprovalSummary>(entry) : undefined;
    this.logger.warn(
      { approval_id: id, call_id: summary?.call_id },
      'pending approval removed: the instance holding its call was lost (its lease lapsed)',
    );
    const event: ApprovalEvent = {
      type: 'approval.decided',
      id,
      call_id: summary?.call_id ?? '',
      decision: 'canceled',
      approver: null,
    };
    // The other instances hear it on the channel; this one (which skips its own messages) is told here.
    this.tell(event);
    await this.publish(event).catch(() => {});
  }

  /** LeaseKind: Redis has no lease for an approval held here (it lost its data): write it again. */
  async missing(member: string): Promise<void> {
    const summary = this.mine.get(member.slice(this.prefix.length));
    if (summary) await this.write(summary);
  }

  /** An approval held here is read after its own write (an approver acting on its status event at once finds it). */
  private async written(id: string): Promise<void> {
    await this.writes.get(id);
  }

  private async write(summary: ApprovalSummary): Promise<void> {
    const ttl = Math.max(1, Math.ceil(summary.expires_at - Date.now() / 1000)) + ENTRY_SLACK_S;
    await this.redis.run('sharing a pending approval', (c) =>
      ADD.run(c, this.keys(summary.id), [
        summary.id,
        JSON.stringify(summary),
        ttl,
        this.leases.ms,
        this.member(summary.id),
        Math.round(summary.created_at * 1000),
      ]),
    );
  }

  private async unclaim(summary: ApprovalSummary): Promise<void> {
    const ttl = Math.max(1, Math.ceil(summary.expires_at - Date.now() / 1000)) + ENTRY_SLACK_S;
    await UNCLAIM.run(this.redis.client, this.keys(summary.id), [
      summary.id,
      JSON.stringify(summary),
      ttl,
      this.member(summary.id),
      Math.round(summary.created_at * 1000),
    ]).catch(() => {});
  }

  private async publish(event: ApprovalEvent): Promise<void> {
    await this.redis.client.publish(this.changesChannel, JSON.stringify({ from: this.instance, event }));
  }

  /** Decisions for the calls held here, replies to the decisions made here, and every instance's changes. */
  private async listen(): Promise<void> {
    for (let failures = 0; !this.closed; failures++) {
      try {
        await this.redis.subscribe(this.decideChannel(this.instance), this.onRequest);
        await this.redis.subscribe(this.replyChannel(this.instance), this.onReply);
        await this.redis.subscribe(this.changesChannel, this.onChange);
        return; // the client resubscribes by itself after a reconnect
      } catch (err) {
        if (failures === 0)
          this.logger.warn(
            { error: (err as Error)?.message },
            'listening for approval decisions from other instances failed; retrying',
          );
        await new Promise((resolve) => setTimeout(resolve, 1000).unref());
      }
    }
  }

  private readonly onRequest = (text: string): void => void this.answer(text);

  /** A decision made on another instance for a call held here: apply it and tell the decider. */
  private async answer(text: string): Promise<void> {
    if (this.closed) return; // closing: a decision that came meanwhile is not applied (its decider undoes its claim)
    const request = parse<Request>(text);
    if (!request || typeof request.reply !== 'string' || typeof request.from !== 'string') return;
    let reply: Reply;
    try {
      const d = request.decision;
      if (typeof d?.id !== 'string' || (d.decision !== 'approve' && d.decision !== 'deny')) {
        throw new GatewayError('invalid_request', 'a malformed approval decision came from another instance');
      }
      if (!this.apply) throw new GatewayError('unavailable', 'approvals are not served on this instance');
      this.apply(request.decision);
      reply = { reply: request.reply, ok: true };
    } catch (err) {
      const e = err instanceof GatewayError ? err : undefined;
      reply = {
        reply: request.reply,
        ok: false,
        code: e?.code ?? 'internal',
        message: e?.message ?? 'applying the decision failed on the instance holding the call',
      };
    }
    await this.redis.client
      .publish(this.replyChannel(request.from), JSON.stringify(reply))
      .catch((err: unknown) =>
        this.logger.warn(
          { approval_id: request.decision?.id, error: (err as Error)?.message },
          'answering an approval decision made on another instance failed; the decider answers its approver with a retryable error',
        ),
      );
  }

  private readonly onReply = (text: string): void => {
    const reply = parse<Reply>(text);
    if (reply && typeof reply.reply === 'string') this.waiting.get(reply.reply)?.(reply);
  };

  private readonly onChange = (text: string): void => {
    const message = parse<{ from: string; event: ApprovalEvent }>(text);
    if (!message || message.from === this.instance || !message.event) return;
    this.tell(message.event);
  };

  private tell(event: ApprovalEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own (a closed stream).
      }
    }
  }

  private member(id: string): string {
    return this.prefix + id;
  }

  private keys(id: string): string[] {
    return [this.entryKey(id), this.indexKey, this.leases.key];
  }

  private entryKey(id: string): string {
    return this.redis.key('approval', id);
  }

  private get indexKey(): string {
    return this.redis.key('approvals', 'pending');
  }

  private get changesChannel(): string {
    return this.redis.key('approvals', 'changes');
  }

  private decideChannel(instance: string): string {
    return this.redis.key('approvals', 'decide', instance);
  }

  private replyChannel(instance: string): string {
    return this.redis.key('approvals', 'reply', instance);
  }
}

/** Approval ids are 18 random bytes in base64url. */
function isApprovalId(id: string): boolean {
  return /^[A-Za-z0-9_-]{24}$/.test(id);
}

/** JSON read from Redis (written by an instance, but bounded and checked like anything read from a peer). */
function parse<T>(text: string): T | undefined {
  if (text.length > MAX_READ_BYTES) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}
