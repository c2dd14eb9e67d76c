/**
 * Tags that map onto MCP's tool annotation hints: the MCP door (src/mcp-server) sends a tag as its hint, the MCP
 * source (src/mcp) reads a server's hints back as tags.
 */
export const HINT_TAGS = {
  readOnlyHint: 'read-only',
  destructiveHint: 'destructive',
  idempotentHint: 'idempotent',
  openWorldHint: 'open-world',
} as const;
