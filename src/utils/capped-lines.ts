/**
 * Newline-delimited messages read from a peer's byte stream (an MCP server's
 * stdout, a desktop client's stdin), each at most `maxBytes`. A line is
 * counted before it is buffered: once it would pass the cap, what it has so
 * far is dropped and the rest is only counted, up to the next newline, where
 * reading resyncs. So a peer that writes one huge line (or never ends one)
 * costs at most `maxBytes` of memory and fails that one message, never the
 * process (string length limits, a reader that throws from a stream handler).
 *
 * Chunks of a line are kept as they came and joined once, when the line ends
 * (joining at every chunk copies a long line over and over).
 */

const NEWLINE = 0x0a;

export interface CappedLineHandlers {
  /** One whole line, without its newline (and without a trailing `\r`). */
  line(bytes: Buffer): void;
  /**
   * A line passed `maxBytes`: called once as it does, with the first bytes it had (`head`, at most
   * `maxBytes`), before they are dropped.
   */
  overflow?(head: Buffer): void;
  /** Each later chunk of that line (dropped after this call), to look into on the way (e.g. for a message id). */
  overflowPart?(bytes: Buffer): void;
  /** That line ended (its newline came); `bytes` is its whole length. */
  overflowEnd?(bytes: number): void;
}

export class CappedLines {
  private parts: Buffer[] = [];
  private partsBytes = 0;
  /** Bytes of the line being skipped (over the cap), or -1 when reading normally. */
  private skipped = -1;

  constructor(
    readonly maxBytes: number,
    private readonly handlers: CappedLineHandlers,
  ) {}

  /** Take the next chunk of the stream. */
  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl < 0 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl < 0) return;
      this.endLine();
      start = nl + 1;
    }
  }

  /** The stream ended: a last line without a newline counts as a line. */
  end(): void {
    if (this.partsBytes > 0 || this.skipped >= 0) this.endLine();
  }

  /** Bytes of the current line (not ended yet), kept or skipped. */
  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipped >= 0) {
      this.skipped += piece.length;
      this.handlers.overflowPart?.(piece);
      return;
    }
    if (this.partsBytes + piece.length <= this.maxBytes) {
      this.parts.push(piece);
      this.partsBytes += piece.length;
      return;
    }
    // Over the cap: hand on what fits (the head), drop it all, count the rest.
    const room = this.maxBytes - this.partsBytes;
    this.parts.push(piece.subarray(0, room));
    const head = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.skipped = this.partsBytes + piece.length;
    this.parts = [];
    this.partsBytes = 0;
    this.handlers.overflow?.(head);
    this.handlers.overflowPart?.(piece.subarray(room));
  }

  private endLine(): void {
    if (this.skipped >= 0) {
      const bytes = this.skipped;
      this.skipped = -1;
      this.handlers.overflowEnd?.(bytes);
      return;
    }
    let line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.partsBytes);
    this.parts = [];
    this.partsBytes = 0;
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    this.handlers.line(line);
  }
}
