/**
 * Tool names the gateway builds from a source's names (an MCP server's id and tools, an A2A card and its skills):
 * one rule, so every source's tools and the folders named after them read alike.
 */

/** Every character outside [A-Za-z0-9_-] becomes "_". */
export const toolNamePart = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');
