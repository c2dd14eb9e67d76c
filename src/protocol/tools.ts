/**
 * Zod schemas for the A2E "tools" capability (spec: a2e-tools-capability.txt),
 * field for field. These are the single source for request validation, the
 * TypeScript types and the OpenAPI document.
 */
import { z } from 'zod';
import { messageFields, nowTs } from './base.js';
import { FIELD_LIMITS } from './field-limits.js';

// ---------------------------------------------------------------- models

/** The JSON types a ToolParameter may declare. */
export const PARAMETER_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;

export interface ToolParameter {
  name: string;
  type: (typeof PARAMETER_TYPES)[number];
  description: string;
  required?: boolean;
  enum?: string[] | null;
  properties?: Record<string, ToolParameter> | null;
}

export const ToolParameter: z.ZodType<ToolParameter> = z
  .object({
    name: z.string().min(1).meta({ description: 'Parameter name' }),
    type: z.enum(PARAMETER_TYPES).meta({ description: 'JSON Schema type' }),
    description: z.string().meta({ description: 'Parameter description' }),
    required: z.boolean().default(false).meta({ description: 'Whether this parameter is required' }),
    enum: z.array(z.string()).nullable().default(null).meta({ description: 'Allowed values for enum types' }),
    get properties() {
      return z
        .record(z.string(), ToolParameter)
        .nullable()
        .default(null)
        .meta({ description: 'Nested properties for object types' });
    },
  })
  .meta({ id: 'ToolParameter', description: 'One input or output parameter of a tool' }) as never;

export const ToolDefinition = z
  .object({
    name: z.string().min(1).meta({ description: 'Unique tool name (e.g. "read_file")' }),
    description: z.string().meta({ description: 'Human-readable description' }),
    input_parameters: z.array(ToolParameter).default([]).meta({ description: 'Input parameter schema' }),
    output_parameters: z.array(ToolParameter).default([]).meta({ description: 'Output parameter schema' }),
    streaming: z.boolean().default(true).meta({ description: 'Supports streaming events' }),
    idempotent: z.boolean().default(false).meta({ description: 'Safe to retry on failure' }),
    tags: z.array(z.string()).default([]).meta({ description: 'Classification tags' }),
    version: z.string().default('1.0.0').meta({ description: 'Tool version' }),
    toolkit: z.string().nullable().default(null).meta({ description: 'Parent toolkit name' }),
    defer_loading: z
      .boolean()
      .default(false)
      .meta({ description: 'Exclude from the initial list; discoverable via search' }),
    kind: z.string().default('native').meta({
      description: 'Extension: where the tool comes from ("native", "a2a", "mcp", …); matched by filter_kind',
    }),
    input_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({
        description:
          "Extension: the tool's own JSON Schema of its arguments, when it has one (tools of MCP servers). Arguments are " +
          'validated against it (defaults filled in); input_parameters is its approximation',
      }),
    mcp: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({
        description:
          'Extension: how the tool is described to MCP clients beyond its input schema (title, annotations, outputSchema, ' +
          "icons, _meta): a tool of an MCP server keeps the server's own, re-served as is at /mcp; a native tool states " +
          'its annotations',
      }),
  })
  .meta({ id: 'ToolDefinition', description: 'A tool manifest' });
export type ToolDefinition = z.output<typeof ToolDefinition>;
/** What a plugin writes: defaults may be left out. */
export type ToolDefinitionInput = z.input<typeof ToolDefinition>;

// ---------------------------------------------------------------- events

// Event payloads keep unknown fields (looseObject): a newer peer's extra data is passed on, not dropped.
export const ProgressData = z
  .looseObject({ pct: z.int(), message: z.string() })
  .meta({ id: 'ProgressEventData', description: 'kind "progress": progress update' });
export const StatusData = z
  .looseObject({ message: z.string() })
  .meta({ id: 'StatusEventData', description: 'kind "status": one-line status update' });
export const ArtifactData = z
  .looseObject({ name: z.string(), mime: z.string(), chunk: z.string(), final: z.boolean() })
  .meta({ id: 'ArtifactEventData', description: 'kind "artifact": partial/incremental data chunk' });
export const LogData = z
  .looseObject({ level: z.string(), message: z.string() })
  .meta({ id: 'LogEventData', description: 'kind "log": debug log line' });

/** The data shape of each event kind. */
export interface ToolEventDataMap {
  progress: z.infer<typeof ProgressData>;
  status: z.infer<typeof StatusData>;
  artifact: z.infer<typeof ArtifactData>;
  log: z.infer<typeof LogData>;
}
export type ToolEventKind = keyof ToolEventDataMap;
export const TOOL_EVENT_KINDS: readonly ToolEventKind[] = ['progress', 'status', 'artifact', 'log'];

const eventOf = <K extends ToolEventKind, D extends z.ZodType>(kind: K, data: D) =>
  z.object({
    ...messageFields('tool/event'),
    kind: z.literal(kind).meta({ description: 'Event kind' }),
    req_id: z.string().default('').meta({ description: 'Correlates to the ToolCallRequest id' }),
    data,
    seq: z.int().min(0).default(0).meta({ description: 'Per-call sequence number, counting from 0' }),
  });

export const ToolEvent = z
  .discriminatedUnion('kind', [
    eventOf('progress', ProgressData),
    eventOf('status', StatusData),
    eventOf('artifact', ArtifactData),
    eventOf('log', LogData),
  ])
  .meta({ id: 'ToolEvent', description: 'A streaming event emitted while a tool call runs; `data` depends on `kind`' });
export type ToolEvent = z.output<typeof ToolEvent>;

// ---------------------------------------------------------------- result

export const ToolResult = z
  .object({
    success: z.boolean().meta({ description: 'Whether execution succeeded' }),
    tool_name: z.string().meta({ description: 'Tool that produced this result' }),
    data: z.unknown().default(null).meta({ description: 'Result data' }),
    summary: z.unknown().default(null).meta({ description: 'Human-readable summary' }),
    truncated: z.boolean().default(false).meta({ description: 'Output was truncated' }),
    exit_code: z.int().nullable().default(null).meta({ description: 'Process exit code (if applicable)' }),
    error: z.string().nullable().default(null).meta({ description: 'Error message' }),
    error_code: z.string().nullable().default(null).meta({ description: 'Machine-readable error code' }),
    duration_ms: z.int().min(0).meta({ description: 'Execution time in milliseconds' }),
    events: z.array(ToolEvent).default([]).meta({ description: 'Collected streaming events' }),
  })
  .meta({ id: 'ToolResult', description: 'The outcome of a tool call' });
export type ToolResult = z.output<typeof ToolResult>;

// ---------------------------------------------------------------- messages

export const ToolListRequest = z
  .object({
    ...messageFields('tool/list/req'),
    session_id: z
      .string()
      .max(FIELD_LIMITS.id)
      .default('')
      .meta({ description: 'Session from the handshake (when sessions are used)' }),
    filter_kind: z.string().max(FIELD_LIMITS.name).default('').meta({ description: 'Tool kind filter (empty = all)' }),
    filter_tags: z
      .array(z.string().max(FIELD_LIMITS.name))
      .max(FIELD_LIMITS.listItems)
      .default([])
      .meta({ description: 'Tag filter list (AND semantics)' }),
    query: z
      .string()
      .max(FIELD_LIMITS.query)
      .default('')
      .meta({ description: 'Search query — empty = list mode, non-empty = search mode' }),
    include_deferred: z
      .boolean()
      .default(false)
      .meta({ description: 'Include deferred tools in results (search mode)' }),
  })
  .meta({ id: 'ToolListRequest', description: 'List or search the available tools' });
export type ToolListRequest = z.output<typeof ToolListRequest>;

export const ToolListResponse = z
  .object({
    ...messageFields('tool/list/resp'),
    req_id: z.string().default('').meta({ description: 'Echoes the request id' }),
    tools: z.array(ToolDefinition).default([]).meta({ description: 'Available tool definitions' }),
  })
  .meta({ id: 'ToolListResponse', description: 'The matching tool manifests' });
export type ToolListResponse = z.output<typeof ToolListResponse>;

export const ToolCallRequest = z
  .object({
    ...messageFields('tool/call/req'),
    session_id: z.string().max(FIELD_LIMITS.id).default('').meta({ description: 'Session from the HandshakeResponse' }),
    tool_name: z.string().min(1).max(FIELD_LIMITS.name).meta({ description: 'Must match ToolDefinition.name' }),
    arguments: z
      .record(z.string(), z.unknown())
      .meta({ description: "Input arguments, validated against the tool's input_parameters" }),
    correlation_id: z
      .string()
      .max(FIELD_LIMITS.id)
      .default('')
      .meta({ description: 'Ties this call to an agent turn for tracing' }),
    streaming: z
      .boolean()
      .default(false)
      .meta({ description: 'If true, the host emits ToolEvents before the final response' }),
    timeout: z
      .int()
      .positive()
      .default(30)
      .meta({ description: 'Per-call wall-clock limit in seconds (capped by server.max_timeout_s)' }),
  })
  .meta({ id: 'ToolCallRequest', description: 'Execute a tool' });
export type ToolCallRequest = z.output<typeof ToolCallRequest>;

export const ToolCallResponse = z
  .object({
    ...messageFields('tool/call/resp'),
    req_id: z.string().default('').meta({ description: 'Echoes the request id' }),
    data: ToolResult,
    created_at: z
      .number()
      .optional()
      .transform((v) => v ?? nowTs())
      .meta({ description: 'Result creation timestamp' }),
  })
  .meta({ id: 'ToolCallResponse', description: 'Final result of a tool call' });
export type ToolCallResponse = z.output<typeof ToolCallResponse>;
