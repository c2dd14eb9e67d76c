/**
 * GET /sources: the plugins of a set as tool sources in one shape. A native
 * group or a plugin is one source; the A2A, MCP and OpenAPI plugins are one
 * source per configured agent, server or document.
 */
import type { PluginSet } from './plugin-set.js';
import type { SourceStatus } from './protocol/index.js';

export function listSources(plugins: PluginSet): SourceStatus[] {
  const conflicts = plugins.registry.conflicts;
  const { a2a, mcp, openapi } = plugins;
  const out: SourceStatus[] = [];
  for (const p of plugins.all) {
    if (p === a2a || p === mcp || p === openapi) continue;
    const kinds = new Set(p.listTools().map((t) => t.kind ?? 'native'));
    out.push({
      id: p.name,
      kind: kinds.size === 1 && kinds.has('native') ? 'native' : 'plugin',
      health: p.loading?.() ? 'loading' : 'ok',
      tool_count: p.listTools().length,
      last_refresh: null,
      last_error: null,
    });
  }
  for (const a of a2a?.status(conflicts) ?? []) {
    const health =
      a.state === 'ok' ? 'ok' : a.state === 'failed' ? (a.tools.length > 0 ? 'degraded' : 'failed') : a.state;
    out.push({
      id: a.name,
      kind: 'a2a',
      health,
      tool_count: a.tools.length,
      last_refresh: a.last_fetched,
      last_error: a.last_error,
    });
  }
  for (const s of mcp?.status(conflicts) ?? []) {
    const health =
      s.state === 'ready'
        ? 'ok'
        : s.state === 'starting'
          ? 'loading'
          : s.state === 'restarting'
            ? 'degraded'
            : s.state === 'disabled'
              ? 'disabled'
              : 'failed';
    out.push({
      id: s.id,
      kind: 'mcp',
      health,
      tool_count: s.tools.length,
      last_refresh: s.last_started,
      last_error: s.last_error,
    });
  }
  for (const s of openapi?.status() ?? []) {
    const health = s.state === 'ready' ? (s.last_error ? 'degraded' : 'ok') : s.state;
    out.push({
      id: s.id,
      kind: 'openapi',
      health,
      tool_count: s.tools.length,
      last_refresh: s.last_refresh,
      last_error: s.last_error,
    });
  }
  return out;
}
