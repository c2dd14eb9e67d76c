import { z } from 'zod';
import { isoTimeOrNull, lastError, sourceStatusList } from './source-status.js';

/**
 * One tool source, whatever it is, as GET /sources reports it: a native tool group, a plugin, an A2A agent, an
 * MCP server or an OpenAPI document. GET /agents and GET /mcp-servers give the details of their kinds.
 */
export const SourceStatus = z
  .object({
    id: z.string().meta({
      description:
        'The source: a native group or plugin name, or the id from the config (agents.<id>, mcp.servers.<id>, openapi.sources.<id>)',
    }),
    kind: z
      .enum(['native', 'plugin', 'a2a', 'mcp', 'openapi'])
      .meta({ description: 'What the source is (the `kind` of its tools, "plugin" for plugins)' }),
    health: z.enum(['ok', 'loading', 'degraded', 'failed', 'disabled']).meta({
      description:
        'ok: its tools can be called; loading: not there yet; degraded: it serves its last tools but its last refresh or restart failed; failed: it offers nothing (see last_error); disabled: off in the config',
    }),
    tool_count: z.int().min(0).meta({ description: 'Tools it currently contributes' }),
    last_refresh: isoTimeOrNull('When its tools were last read (ISO 8601); null when not known'),
    last_error: lastError('Why it last failed; null when it did not'),
  })
  .meta({ id: 'SourceStatus', description: "A tool source's health and tool count" });
export type SourceStatus = z.output<typeof SourceStatus>;

export const SourcesResponse = sourceStatusList('sources', SourceStatus, {
  id: 'SourcesResponse',
  description:
    'Every tool source: native groups and plugins first, then A2A agents, MCP servers and OpenAPI documents in configuration order',
});
export type SourcesResponse = z.output<typeof SourcesResponse>;

/** One configured OpenAPI document's state (the `detail` GET /sources does not give). */
export const OpenApiSourceStatus = z
  .object({
    id: z.string(),
    spec: z.string().meta({ description: 'The document: its URL (without credentials or query) or file path' }),
    base_url: z.string().nullable().meta({ description: 'Where requests go' }),
    state: z.enum(['disabled', 'loading', 'ready', 'failed']),
    tools: z.array(z.string()),
    skipped: z
      .array(z.object({ operation: z.string(), reason: z.string() }))
      .meta({ description: 'Selected operations that could not be tools, and why' }),
    last_refresh: isoTimeOrNull('When the document was last read successfully'),
    last_error: lastError('Why the document last failed to load'),
  })
  .meta({ id: 'OpenApiSourceStatus' });
export type OpenApiSourceStatus = z.output<typeof OpenApiSourceStatus>;
