/**
 * The chaos run's books: every call started on any door ends in exactly one
 * outcome (ok, failed visibly, or lost: no answer at all), every error a
 * client saw is kept with whether it is acceptable (retryable and saying what
 * happened), and every event stream is checked for duplicated, missing and
 * out-of-order events. Nothing here decides to pass: the report and the test
 * read the counts.
 */

export type Door = 'json' | 'resource' | 'transport';
export type Outcome = 'ok' | 'failed' | 'lost';

/** One error as a client saw it, classified. */
export interface SeenError {
  door: Door;
  /** Short label for grouping, e.g. "HTTP 502 (nginx)", "tool_error", "transport 404". */
  kind: string;
  /** What the client was told, trimmed. */
  text: string;
  acceptable: boolean;
}

export interface DoorTally {
  started: number;
  ok: number;
  failed: number;
  lost: number;
  /** Lost calls: their id and what the client knew of each (last thing seen), for the report. */
  lostNotes: { id: string; note: string }[];
}

export interface StreamTally {
  /** Streams checked (calls for the resource and transport doors; sessions' frame sequences too). */
  streams: number;
  events: number;
  duplicated: number;
  missing: number;
  /** Of `missing`, events a gap notice said were skipped. */
  missingAnnounced: number;
  outOfOrder: number;
  /** An event whose content is not the one its seq names ("tick N" at seq N). */
  wrongContent: number;
  /** Reconnections with Last-Event-ID. */
  resumes: number;
  /** Notes on each problem (which call, which seq), for the report. */
  notes: string[];
}

const NOTE_LIMIT = 20;
const trim = (text: string) => (text.length > 240 ? `${text.slice(0, 240)}…` : text);

export class Ledger {
  readonly doors: Record<Door, DoorTally> = { json: tally(), resource: tally(), transport: tally() };
  readonly events: StreamTally = {
    streams: 0,
    events: 0,
    duplicated: 0,
    missing: 0,
    missingAnnounced: 0,
    outOfOrder: 0,
    wrongContent: 0,
    resumes: 0,
    notes: [],
  };
  /** Transport frames (the session's SSE ids 0, 1, 2, …), checked like events. */
  readonly frames: StreamTally = {
    streams: 0,
    events: 0,
    duplicated: 0,
    missing: 0,
    missingAnnounced: 0,
    outOfOrder: 0,
    wrongContent: 0,
    resumes: 0,
    notes: [],
  };
  readonly errors: SeenError[] = [];
  /** Transport sessions lost (their session answered 404) and reopened. */
  sessionsLost = 0;
  sessionsOpened = 0;
  /** When instances were SIGKILLed (Date.now()) and their pids, so a claim that a call's instance was lost can be checked. */
  readonly killedAt: number[] = [];
  /** pid → when it was killed. */
  readonly killedPids = new Map<number, number>();

  /**
   * Whether the instance running a call can have been lost: its pid (from the call's events) was killed, or,
   * when no event named it, any instance was killed since the call started.
   */
  instanceDied(owner: number | undefined, startedAt: number): boolean {
    return owner !== undefined ? this.killedPids.has(owner) : this.killedAt.some((k) => k >= startedAt);
  }

  /** For a lost call's note: which instance ran it, and whether and when it was killed. */
  ownerNote(owner: number | undefined): string {
    if (owner === undefined) return 'no event named the instance running it';
    const at = this.killedPids.get(owner);
    return at === undefined
      ? `it ran on pid ${owner}, never killed`
      : `it ran on pid ${owner}, SIGKILLed at +${((at - this.t0) / 1000).toFixed(1)} s`;
  }

  started(door: Door): void {
    this.doors[door].started++;
  }

  /** The outcome of a call; a lost one says which (`id`) and what the client knew. */
  outcome(door: Door, outcome: Outcome, lost?: { id: string; note: string }): void {
    const t = this.doors[door];
    t[outcome]++;
    if (outcome === 'lost' && lost && t.lostNotes.length < NOTE_LIMIT) t.lostNotes.push(lost);
  }

  error(door: Door, kind: string, text: string, acceptable: boolean): void {
    this.errors.push({ door, kind, text: trim(text), acceptable });
  }

  /** When the run started (Date.now()): notes say when on the faults' timeline. */
  t0 = Date.now();

  note(tally: StreamTally, text: string): void {
    if (tally.notes.length < NOTE_LIMIT) tally.notes.push(`+${((Date.now() - this.t0) / 1000).toFixed(1)} s ${text}`);
  }

  get unacceptableErrors(): SeenError[] {
    return this.errors.filter((e) => !e.acceptable);
  }

  get lost(): number {
    return this.doors.json.lost + this.doors.resource.lost + this.doors.transport.lost;
  }

  /** Duplicated, missing or out-of-order events and frames, all doors together. */
  get disorder(): number {
    const sum = (t: StreamTally) => t.duplicated + t.missing + t.outOfOrder + t.wrongContent;
    return sum(this.events) + sum(this.frames);
  }

  /** Every call has exactly one outcome. */
  get unaccounted(): number {
    return Object.values(this.doors).reduce((n, t) => n + t.started - t.ok - t.failed - t.lost, 0);
  }
}

function tally(): DoorTally {
  return { started: 0, ok: 0, failed: 0, lost: 0, lostNotes: [] };
}

/**
 * The order check of one stream of numbered items: each must come once, in
 * increasing order, none skipped. `announce` takes a skip a gap notice
 * declared (counted as missing, and as announced).
 */
export class SeqCheck {
  private last = -1;
  private readonly seen = new Set<number>();

  constructor(
    private readonly ledger: Ledger,
    private readonly tally: StreamTally,
    /** Names the stream in notes (call id, session id). */
    private readonly name: string,
  ) {
    tally.streams++;
  }

  get lastSeq(): number {
    return this.last;
  }

  /** An item numbered `seq`; `contentOk` false when its content is not the one `seq` names. */
  add(seq: number, contentOk = true): void {
    this.tally.events++;
    if (this.seen.has(seq)) {
      this.tally.duplicated++;
      this.ledger.note(this.tally, `${this.name}: ${seq} came again (after ${this.last})`);
      return;
    }
    this.seen.add(seq);
    if (seq < this.last) {
      this.tally.outOfOrder++;
      this.ledger.note(this.tally, `${this.name}: ${seq} came after ${this.last}`);
      return;
    }
    if (seq > this.last + 1) this.skipped(this.last + 1, seq - 1, false);
    if (!contentOk) {
      this.tally.wrongContent++;
      this.ledger.note(this.tally, `${this.name}: the content of ${seq} is not its own`);
    }
    this.last = seq;
  }

  /** A gap notice: items `from`..`to` will not come. */
  announce(from: number, to: number): void {
    if (to > this.last) {
      this.skipped(Math.max(from, this.last + 1), to, true);
      for (let s = this.last + 1; s <= to; s++) this.seen.add(s);
      this.last = to;
    }
  }

  /** The stream ended with `count` items in all (e.g. the call's final event count): any not received are missing. */
  end(count: number): void {
    if (count > this.last + 1) this.skipped(this.last + 1, count - 1, false);
  }

  private skipped(from: number, to: number, announced: boolean): void {
    const n = to - from + 1;
    this.tally.missing += n;
    if (announced) this.tally.missingAnnounced += n;
    this.ledger.note(
      this.tally,
      `${this.name}: ${from}..${to} ${announced ? 'skipped with a gap notice' : 'never came'}`,
    );
  }
}
