/**
 * A gateway tool as an MCP `Tool` for `tools/list`: `inputSchema` built from
 * `input_parameters` (or the original JSON Schema of a tool that came from an
 * MCP server), annotations from the definition's `mcp` (native tools state
 * theirs) or else from `idempotent` and the tags, a title from the name. A tool
 * of an MCP server goes out with the server's own title, annotations,
 * outputSchema, icons and _meta.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDefinition, ToolParameter } from '../protocol/index.js';
import { HINT_TAGS } from '../wire/mcp-hints.js';

type JsonSchema = Record<string, unknown>;

function parameterSchema(p: ToolParameter): JsonSchema {
  const schema: JsonSchema = { type: p.type };
  if (p.description) schema.description = p.description;
  if (p.enum && p.enum.length > 0) {
    schema.enum =
      p.type === 'integer' || p.type === 'number'
        ? p.enum.map(Number)
        : p.type === 'boolean'
          ? p.enum.map((v) => v === 'true')
          : p.enum;
  }
  if (p.type === 'object' && p.properties) Object.assign(schema, objectSchema(Object.values(p.properties)));
  return schema;
}

/** An object schema that, like the gateway's own validator, rejects unknown keys. */
function objectSchema(params: readonly ToolParameter[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const p of params) {
    properties[p.name] = parameterSchema(p);
    if (p.required) required.push(p.name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** The JSON Schema of a tool's arguments. */
export function inputSchemaOf(definition: ToolDefinition): Tool['inputSchema'] {
  const original = (definition as { input_schema?: unknown }).input_schema;
  if (original && typeof original === 'object' && (original as JsonSchema).type === 'object')
    return original as Tool['inputSchema'];
  return objectSchema(definition.input_parameters) as Tool['inputSchema'];
}

/** "read_file" → "Read file". */
export function titleOf(name: string): string {
  const words = name.replace(/[_-]+/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : name;
}

// Definitions are rebuilt only when the registry is: convert each once.
const converted = new WeakMap<ToolDefinition, Tool>();

export function mcpTool(definition: ToolDefinition): Tool {
  let tool = converted.get(definition);
  if (tool) return tool;
  const own = definition.mcp as Partial<Tool> | undefined;
  if (definition.kind === 'mcp' && own) {
    // A tool of an MCP server: its title, annotations, outputSchema, icons and _meta exactly as the server gave them.
    tool = {
      name: definition.name,
      description: definition.description,
      inputSchema: inputSchemaOf(definition),
      ...own,
    };
  } else {
    tool = {
      name: definition.name,
      title: typeof own?.title === 'string' && own.title ? own.title : titleOf(definition.name),
      description: definition.description,
      inputSchema: inputSchemaOf(definition),
      annotations: own?.annotations ?? annotationsOf(definition),
      ...(own?.outputSchema ? { outputSchema: own.outputSchema } : {}),
      _meta: { 'a2e/kind': definition.kind, 'a2e/tags': definition.tags, 'a2e/toolkit': definition.toolkit },
    };
  }
  converted.set(definition, tool);
  return tool;
}

/**
 * Only what is known: MCP reads a missing destructiveHint as "may destroy",
 * so a hint is set only when a tag (or `idempotent`, or a remote kind) says so.
 */
function annotationsOf(definition: ToolDefinition): NonNullable<Tool['annotations']> {
  const tags = new Set(definition.tags);
  const hints: NonNullable<Tool['annotations']> = {};
  if (tags.has(HINT_TAGS.readOnlyHint)) hints.readOnlyHint = true;
  if (tags.has(HINT_TAGS.destructiveHint)) hints.destructiveHint = true;
  if (definition.idempotent || tags.has(HINT_TAGS.idempotentHint)) hints.idempotentHint = true;
  if (tags.has(HINT_TAGS.openWorldHint) || definition.kind === 'a2a' || definition.kind === 'mcp')
    hints.openWorldHint = true;
  return hints;
}
