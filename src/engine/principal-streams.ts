/**
 * The long-lived streams open on this instance (SSE of every door), each with
 * the principal whose credential opened it, so that a config reload which
 * removes or changes a credential ends every stream opened with it: otherwise
 * a stream outlives its credential, and one keyed by a name goes on carrying
 * what the name's next holder does.
 */
import { EntryList, type Entry } from '../utils/entry-list.js';

interface OpenStream {
  /** The principal (token name) that opened it; null without auth. */
  readonly principal: string | null;
  /** The credential it was opened with (Principal.credential); undefined without auth. */
  readonly credential: string | undefined;
  /** End it with a last frame saying `reason`. */
  readonly end: (reason: string) => void;
}

export class PrincipalStreams {
  private readonly open = new EntryList<OpenStream>();

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  /** Count `end` as a stream of `principal`'s `credential`; call the returned function once the stream has ended. */
  add(principal: string | null, credential: string | undefined, end: (reason: string) => void): () => void {
    const entry: Entry<OpenStream> = this.open.add({ principal, credential, end });
    return () => void this.open.remove(entry);
  }

  /** End every stream whose principal `revoked` picks, saying `reason`; returns how many ended. */
  endWhere(revoked: (principal: string | null, credential: string | undefined) => boolean, reason: string): number {
    const ending: OpenStream[] = [];
    for (const s of this.open) if (revoked(s.principal, s.credential)) ending.push(s);
    for (const s of ending) s.end(reason);
    return ending.length;
  }
}
