/**
 * What a reloaded config changes, key by key, and which of those changes a
 * running gateway can put in force. Everything not listed as live needs a
 * restart: the reload keeps the running value and says so.
 */
import type { GatewayConfig } from '../config/index.js';

/** Config keys (and everything under them) a reload applies to new calls and requests. */
export const LIVE_KEYS: readonly string[] = [
  'tools',
  'agents',
  'a2a',
  'plugins',
  'mcp.servers',
  'mcp.start_wait_ms',
  'mcp.connect_timeout_ms',
  'mcp.restart_min_ms',
  'mcp.restart_max_ms',
  'openapi',
  'policy',
  'approvals',
  'auth.tokens',
  'auth.jwt',
  'limits.max_string_length',
  'limits.max_array_items',
  'limits.rate_per_s',
  'limits.rate_burst',
  'limits.max_concurrent_calls',
  'limits.call_events_bytes',
  'limits.call_retained_events_bytes',
  'server.max_timeout_s',
  'server.max_output_bytes',
  'calls.max_events',
  'calls.max_buffered_events',
  'log.level',
];

export interface ConfigChanges {
  /** Keys whose new value is in force for new calls. */
  applied: string[];
  /** Keys whose change needs a restart; their running value is kept. */
  restartNeeded: string[];
  /** The config the gateway runs with after the reload: the new one, keys needing a restart kept as they were. */
  effective: GatewayConfig;
}

const isLive = (path: string): boolean => LIVE_KEYS.some((k) => path === k || path.startsWith(`${k}.`));
const isMapping = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Dotted paths where `a` and `b` differ: into mappings key by key; lists and values compared whole. */
function differences(a: unknown, b: unknown, path: string[] = [], out: string[] = []): string[] {
  if (isMapping(a) && isMapping(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) differences(a[key], b[key], [...path, key], out);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push(path.join('.'));
  }
  return out;
}

export function configChanges(running: GatewayConfig, next: GatewayConfig): ConfigChanges {
  const changed = differences(running, next);
  const applied = changed.filter(isLive);
  const restartNeeded = changed.filter((p) => !isLive(p));
  const effective = structuredClone(next);
  for (const path of restartNeeded) {
    const keys = path.split('.');
    let from: unknown = running;
    let to = effective as unknown as Record<string, unknown>;
    for (const key of keys.slice(0, -1)) {
      from = (from as Record<string, unknown>)[key];
      to = to[key] as Record<string, unknown>;
    }
    const last = keys.at(-1)!;
    const kept = (from as Record<string, unknown>)[last];
    if (kept === undefined) delete to[last];
    else to[last] = structuredClone(kept);
  }
  return { applied, restartNeeded, effective };
}
