/**
 * Where the events of a Server-Sent Events byte stream end and how long each
 * is, so a reader can bound one event's bytes from a peer before a parser
 * buffers it (eventsource-parser and the MCP SDK's parser keep an event whole,
 * whatever its size). Used on MCP servers' and A2A agents' streams.
 */

const LF = 0x0a;
const CR = 0x0d;

/** Event ends (a blank line: LF, CR or CRLF line ends, as the SSE spec allows) and lengths, across chunks. */
export class SseEventBounds {
  /** Bytes of the event being read, so far. */
  current = 0;
  /** No byte of the current line yet. */
  private lineEmpty = true;
  private afterCr = false;

  /** The offset just past the last event end in `chunk` (0: none ends in it), and the longest event that ended in it. */
  scan(chunk: Buffer): { end: number; largest: number } {
    return this.afterCr || chunk.indexOf(CR) >= 0 ? this.scanBytes(chunk) : this.scanLf(chunk);
  }

  /**
   * LF line ends only (what servers send): from one line end to the next with indexOf, not a byte at a time
   * (a 3 MB answer: about 0.3 ms instead of 25).
   */
  private scanLf(chunk: Buffer): { end: number; largest: number } {
    let end = 0;
    let largest = 0;
    let carried = this.current;
    // Where the previous line end was: just before the chunk when the current line is still empty.
    let previous = this.lineEmpty ? -1 : -2;
    for (let i = chunk.indexOf(LF); i >= 0; i = chunk.indexOf(LF, i + 1)) {
      if (i === previous + 1) {
        const bytes = carried + i + 1 - end;
        if (bytes > largest) largest = bytes;
        carried = 0;
        end = i + 1;
      }
      previous = i;
    }
    this.current = carried + chunk.length - end;
    if (chunk.length > 0) this.lineEmpty = chunk[chunk.length - 1] === LF;
    return { end, largest };
  }

  /** Any line ends, a byte at a time. */
  private scanBytes(chunk: Buffer): { end: number; largest: number } {
    let end = 0;
    let largest = 0;
    let current = this.current;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === LF && this.afterCr) {
        this.afterCr = false;
        if (end === i)
          end = i + 1; // the LF of a CRLF that ended an event goes with it
        else current++;
        continue;
      }
      current++;
      this.afterCr = b === CR;
      if (b === LF || b === CR) {
        if (this.lineEmpty) {
          end = i + 1;
          if (current > largest) largest = current;
          current = 0;
        }
        this.lineEmpty = true;
      } else this.lineEmpty = false;
    }
    this.current = current;
    return { end, largest };
  }
}
