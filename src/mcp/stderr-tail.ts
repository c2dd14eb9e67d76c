/**
 * The last lines a stdio MCP server wrote to stderr, bounded in bytes, for the error that says why it did not come up
 * (a server that times out or exits at start usually said why on stderr: a missing module, npx failing to download).
 */

/** Lines kept, and each line's cut: the tail goes into an error message and GET /mcp-servers. */
const MAX_LINES = 5;
const MAX_LINE_CHARS = 300;

export class StderrTail {
  private lines: string[] = [];

  /** @param secrets values never shown (the server's configured env values: an API key echoed back, say) */
  constructor(private readonly secrets: readonly string[] = []) {}

  push(line: string): void {
    const text = line.trim();
    if (!text) return;
    this.lines.push(text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text);
    if (this.lines.length > MAX_LINES) this.lines.shift();
  }

  clear(): void {
    this.lines = [];
  }

  /** `; its stderr ended with: "…" | "…"`, or '' when it wrote nothing. */
  describe(): string {
    if (this.lines.length === 0) return '';
    let text = this.lines.join(' | ');
    for (const secret of this.secrets) if (secret.length >= 4) text = text.replaceAll(secret, '***');
    return `; its stderr ended with: ${JSON.stringify(text)}`;
  }
}
