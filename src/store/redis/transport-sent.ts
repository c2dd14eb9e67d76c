/**
 * The frames this instance pushed into transport sessions' outboxes lately, with their frame ids. A stream reads
 * them a moment after they are pushed; if Redis loses its data in that moment they are lost with it, unless the
 * instance that pushed them pushes them again (RESTORE_SESSION) — with the same ids, so a stream that read them
 * already does not get them twice. Bounded in bytes and age: past a few leases every stream has read them or
 * is gone.
 */

interface Sent {
  sid: string;
  id: number;
  json: string;
  /** "" a frame, "c" an event of the call `call` names ("<member> <info>"), "e" the answer of the call `call`. */
  kind: '' | 'c' | 'e';
  call: string;
  at: number;
  bytes: number;
}

export class SentFrames {
  private kept: Sent[] = [];
  private head = 0;
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxAgeMs: number,
  ) {}

  /**
   * A push was written: `frames` as the outbox sent them (per frame the lease member it ends, "+<tag>" for an
   * event, "" none, then its JSON), `first` the id of the first frame written, `written` per frame "1" or "0".
   */
  add(sid: string, frames: string[], first: number, written: string): void {
    const now = Date.now();
    let id = first;
    for (let i = 0; i < frames.length; i += 2) {
      if (written[i >> 1] !== '1') continue;
      const member = frames[i]!;
      const json = frames[i + 1]!;
      const kind = member === '' ? '' : member.startsWith('+') ? 'c' : 'e';
      const bytes = json.length + member.length + 64;
      this.kept.push({ sid, id: id++, json, kind, call: kind === 'c' ? member.slice(1) : member, at: now, bytes });
      this.bytes += bytes;
    }
    this.prune(now);
  }

  /** What this instance pushed into `sid` lately, for RESTORE_SESSION: per frame its id, JSON, kind and call. */
  of(sid: string): { args: string[]; last: number } {
    this.prune(Date.now());
    const args: string[] = [];
    let last = -1;
    for (let i = this.head; i < this.kept.length; i++) {
      const s = this.kept[i]!;
      if (s.sid !== sid) continue;
      args.push(String(s.id), s.json, s.kind, s.call);
      last = Math.max(last, s.id);
    }
    return { args, last };
  }

  /** The sessions this instance pushed into lately. */
  sessions(): Set<string> {
    this.prune(Date.now());
    const sids = new Set<string>();
    for (let i = this.head; i < this.kept.length; i++) sids.add(this.kept[i]!.sid);
    return sids;
  }

  /** Forget what is older than maxAgeMs, and the oldest beyond maxBytes. */
  private prune(now: number): void {
    while (this.head < this.kept.length) {
      const s = this.kept[this.head]!;
      if (this.bytes <= this.maxBytes && now - s.at <= this.maxAgeMs) break;
      this.bytes -= s.bytes;
      this.head++;
    }
    // Compact once the forgotten part is the larger one (amortized O(1) a frame).
    if (this.head > 1024 && this.head * 2 > this.kept.length) {
      this.kept = this.kept.slice(this.head);
      this.head = 0;
    }
  }
}
