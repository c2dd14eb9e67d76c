/**
 * Who is told that the tool list changed: the MCP doors, which send
 * notifications/tools/list_changed. A plugin's re-read (an MCP server back,
 * `refresh_s`, an agent card) rebuilds the registry, often with the same
 * tools: watchers hear only of a list that differs (names or definitions),
 * checked once per burst of rebuilds and only while someone watches. A
 * reload is always told: what each caller may see (the policy) may have
 * changed with it.
 */
import type { RegisteredTool } from './registry.js';

export class ToolListWatch {
  private readonly watchers = new Set<() => void>();
  /** The list watchers last heard of, as text (compared, never parsed). */
  private seen = '';
  private check: NodeJS.Timeout | undefined;
  private forced = false;

  constructor(private readonly tools: () => readonly RegisteredTool[]) {}

  /** Call `listener` whenever the list changes, until the returned function is called. */
  watch(listener: () => void): () => void {
    if (this.watchers.size === 0) this.seen = this.signature();
    this.watchers.add(listener);
    return () => void this.watchers.delete(listener);
  }

  /** The registry was rebuilt (`always`: the config was reloaded); watchers hear of it if the list differs. */
  changed(always = false): void {
    if (this.watchers.size === 0) return;
    this.forced ||= always;
    // Rebuilds come in bursts (several servers starting): one comparison after the burst.
    this.check ??= setTimeout(() => this.tell(), 0);
  }

  private tell(): void {
    this.check = undefined;
    const now = this.signature();
    const forced = this.forced;
    this.forced = false;
    if (!forced && now === this.seen) return;
    this.seen = now;
    for (const listener of [...this.watchers]) listener();
  }

  private signature(): string {
    return JSON.stringify(this.tools().map((t) => t.definition));
  }
}
