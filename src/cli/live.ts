/**
 * The live view of a streaming call on a terminal: a progress bar and a
 * status line redrawn in place at the bottom, log lines printed above them as
 * they come, artifacts assembled from their chunks and shown when final.
 */
import type { ToolEvent } from '../client/index.js';

export interface Terminal {
  write(text: string): void;
  /** Width in columns (80 when unknown). */
  readonly columns: number;
}

const CLEAR_LINE = '\r\x1b[2K';
const UP = '\x1b[1A';
const BAR_WIDTH = 30;

interface Artifact {
  mime: string;
  text: string;
}

export class LiveView {
  private pct: number | undefined;
  private progressMessage = '';
  private status = '';
  private drawn = 0; // lines of the live area currently on screen
  private readonly artifacts = new Map<string, Artifact>();

  constructor(private readonly term: Terminal) {}

  onEvent(event: ToolEvent): void {
    switch (event.kind) {
      case 'progress':
        this.pct = Math.max(0, Math.min(100, event.data.pct));
        this.progressMessage = event.data.message;
        break;
      case 'status':
        this.status = event.data.message;
        break;
      case 'log':
        this.above(`[${event.data.level}] ${event.data.message}\n`);
        return;
      case 'artifact': {
        const a = this.artifacts.get(event.data.name) ?? { mime: event.data.mime, text: '' };
        a.text += event.data.chunk;
        this.artifacts.set(event.data.name, a);
        if (event.data.final) {
          this.artifacts.delete(event.data.name);
          this.above(formatArtifact(event.data.name, a));
        }
        break;
      }
    }
    this.draw();
  }

  /** Remove the live area (before printing the result). Unfinished artifacts are shown as they are. */
  finish(): void {
    this.clear();
    for (const [name, a] of this.artifacts) this.term.write(formatArtifact(name, a, true));
    this.artifacts.clear();
  }

  private above(text: string): void {
    this.clear();
    this.term.write(text);
    this.draw();
  }

  private clear(): void {
    if (this.drawn === 0) return;
    this.term.write(CLEAR_LINE + (UP + CLEAR_LINE).repeat(this.drawn - 1));
    this.drawn = 0;
  }

  private draw(): void {
    this.clear();
    const lines: string[] = [];
    const width = Math.max(20, this.term.columns - 1);
    if (this.pct !== undefined) {
      const filled = Math.round((this.pct / 100) * BAR_WIDTH);
      lines.push(
        fit(
          `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(this.pct).padStart(3)}% ${this.progressMessage}`,
          width,
        ),
      );
    }
    if (this.status) lines.push(fit(`status: ${this.status}`, width));
    const partial = [...this.artifacts].map(([name, a]) => `${name} ${a.text.length} chars`);
    if (partial.length) lines.push(fit(`receiving: ${partial.join(', ')}`, width));
    if (lines.length === 0) return;
    this.term.write(lines.join('\n'));
    this.drawn = lines.length;
  }
}

function fit(line: string, width: number): string {
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

function formatArtifact(name: string, a: Artifact, unfinished = false): string {
  const head = `--- artifact ${name} (${a.mime}, ${a.text.length} chars${unfinished ? ', unfinished' : ''}) ---\n`;
  const textual = /^text\/|json|xml|yaml|javascript|csv/.test(a.mime);
  const body = textual
    ? a.text
    : `(${a.mime} content not shown; use --stream without a terminal to get the raw chunks)`;
  return `${head}${body}${body.endsWith('\n') ? '' : '\n'}`;
}
