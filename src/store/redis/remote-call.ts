/**
 * A call resource that runs on another instance, read from Redis: the same
 * read surface as a local `Call` (CallView). Its events come from the call's
 * stream through this instance's shared StreamReader; its state, event count
 * and response follow what its watchers read.
 */
import type { ToolCallResponse, ToolEvent } from '../../protocol/index.js';
import {
  gapNotice,
  type CallState,
  type CallView,
  type CallWatch,
  type EventBatch,
  type StopReason,
} from '../../engine/index.js';
import { PulledStream, type StreamEntry, type StreamReader } from './stream-reader.js';

/** What a remote view needs from the store. */
export interface RemoteCallHost {
  reader: StreamReader;
  /** Key of a call's event stream. */
  streamKey(id: string): string;
  /** Ask the owner to stop the call; false when no instance listens on its channel (the owner is gone). */
  requestStop(owner: string, id: string): Promise<boolean>;
}

/** How long DELETE on another instance waits for the owner's final response before answering with what it knows. */
const STOP_WAIT_MS = 2000;

export class RemoteCall implements CallView {
  readonly id: string;
  readonly owner: string;
  readonly requestId: string;
  readonly toolName: string;
  readonly principal: string | null;
  readonly credential: string | undefined;
  readonly createdAt: number;
  state: CallState;
  eventCount: number;
  response: ToolCallResponse | undefined;
  readonly lags = true;

  constructor(
    private readonly host: RemoteCallHost,
    id: string,
    /** The call's hash (HGETALL). */
    fields: Record<string, string>,
  ) {
    this.id = id;
    this.owner = fields.owner ?? '';
    this.requestId = fields.req ?? '';
    this.toolName = fields.tool ?? '';
    this.principal = fields.principal ?? null;
    this.credential = fields.credential;
    this.createdAt = Number(fields.created ?? 0);
    this.state = (fields.state ?? 'running') as CallState;
    this.eventCount = Number(fields.events ?? 0);
    this.response = fields.response ? (JSON.parse(fields.response) as ToolCallResponse) : undefined;
  }

  get settled(): boolean {
    return this.response !== undefined;
  }

  watch(afterSeq = -1): CallWatch {
    return new RemoteWatch(this, this.host.reader, this.host.streamKey(this.id), afterSeq);
  }

  async stop(_reason: StopReason): Promise<void> {
    if (this.settled) return;
    const watch = this.watch(this.eventCount - 1);
    if (!(await this.host.requestStop(this.owner, this.id))) {
      // Nobody runs it any more: the lease sweeper fails it once the lease lapses.
      watch.close();
      return;
    }
    // Answer with the final state: follow the call until the owner's response arrives (bounded).
    const timer = setTimeout(() => watch.close(), STOP_WAIT_MS);
    try {
      for await (const _ of watch);
    } finally {
      clearTimeout(timer);
    }
  }

  gapNotice(gap: { from: number; to: number }): ToolEvent {
    return gapNotice(this.requestId, gap);
  }

  /** @internal The final entry was read. */
  settle(response: ToolCallResponse, state: CallState, events: number): void {
    this.response = response;
    this.state = state;
    this.eventCount = Math.max(this.eventCount, events);
  }
}

/** Follows a remote call's stream: events in order, a gap notice for what was trimmed, ends after the final entry. */
class RemoteWatch implements CallWatch {
  private closed = false;
  private readonly sub: PulledStream;
  /** Seq of the next event expected. */
  private cursor: number;

  constructor(
    private readonly call: RemoteCall,
    reader: StreamReader,
    key: string,
    afterSeq: number,
  ) {
    this.cursor = afterSeq + 1;
    this.sub = new PulledStream(
      reader,
      key,
      afterSeq < 0 ? '0-0' : `${afterSeq}-1`,
      'following the events of a call that runs on another instance',
    );
  }

  close(): void {
    this.closed = true;
    this.sub.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<EventBatch> {
    try {
      for (;;) {
        const entries = this.closed ? null : await this.sub.next();
        if (!entries) return;
        const { batches, final } = this.split(entries);
        for (const b of batches) yield b;
        if (final) return;
      }
    } finally {
      this.close();
    }
  }

  /** Entries → batches (a new batch starts at each gap); `final` once the response entry was read. */
  private split(entries: StreamEntry[]): { batches: EventBatch[]; final: boolean } {
    const batches: EventBatch[] = [];
    let batch: EventBatch = { events: [] };
    for (const [id, fields] of entries) {
      const seq = Number(id.slice(0, id.indexOf('-')));
      if (seq > this.cursor) {
        if (batch.events.length || batch.gap) batches.push(batch);
        batch = { events: [], gap: { from: this.cursor, to: seq - 1 } };
        this.cursor = seq;
      }
      if (fields[0] === 'r') {
        if (batch.events.length || batch.gap) batches.push(batch);
        this.call.settle(JSON.parse(fields[1]!) as ToolCallResponse, (fields[3] ?? 'failed') as CallState, seq);
        return { batches, final: true };
      }
      batch.events.push(JSON.parse(fields[1]!) as ToolEvent);
      this.cursor = seq + 1;
    }
    if (batch.events.length || batch.gap) batches.push(batch);
    if (this.cursor > this.call.eventCount) this.call.eventCount = this.cursor;
    return { batches, final: false };
  }
}
