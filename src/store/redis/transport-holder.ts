/** A stream of a transport session that this instance holds, and the message ids it wrote last. */
import type { FrameSink, SessionBinding } from '../../transport/a2e-http/index.js';
import type { StreamSubscription } from './stream-reader.js';

/** A stream of a session held by this instance. */
export interface Holder {
  sid: string;
  nonce: string;
  sink: FrameSink;
  reading: StreamSubscription | undefined;
  ended: boolean;
  /** WRITTEN updates, in order. */
  writes: Promise<unknown>;
  /** What this instance knows of the session, to put it back if Redis loses it. */
  binding: SessionBinding;
  handshakeId: string;
  /** Id of the last frame written to the stream (or seen by the client before it attached). */
  last: number;
  /** Message ids of the frames written last: an answer pushed again after Redis lost it with its reply is not written twice. */
  recent: RecentIds;
  /**
   * Calls whose events this stream carried and whose answers it has not yet (lease member → its info): if Redis
   * loses their leases and their instance dies too, the leases this instance puts back lapse into their answers.
   */
  running: Map<string, string>;
  /** Of those, the ones this instance put back: their lease goes if their answer turns up after all. */
  putBack: Set<string>;
}

/**
 * The message ids of the last frames a stream wrote. A frame is pushed again when its push's reply was lost
 * (Redis restarting under it): after a restart without persistence it gets a new frame id, and only its
 * message id (every A2E message has a unique one, first after its type) shows it was written already.
 */
export class RecentIds {
  private static readonly SIZE = 256;
  private readonly ring: string[] = [];
  private readonly set = new Set<string>();
  private at = 0;

  /** True when `frame`'s message id was written already; else remember it. */
  seen(frame: string): boolean {
    // {"type":"…","id":"…", as every message is written; anything else is not deduplicated.
    if (!frame.startsWith('{"type":"')) return false;
    const typeEnd = frame.indexOf('"', 9);
    if (!frame.startsWith(',"id":"', typeEnd + 1)) return false;
    const start = typeEnd + 8;
    const id = frame.slice(start, frame.indexOf('"', start));
    if (this.set.has(id)) return true;
    if (this.ring.length < RecentIds.SIZE) this.ring.push(id);
    else {
      this.set.delete(this.ring[this.at]!);
      this.ring[this.at] = id;
      this.at = (this.at + 1) % RecentIds.SIZE;
    }
    this.set.add(id);
    return false;
  }
}
