/**
 * What the status answers of the remote tool sources (GET /agents, GET
 * /mcp-servers) have in common: one list of the configured sources, in
 * configuration order, and the same kinds of fields in each entry.
 */
import { z } from 'zod';

/** `{ <key>: [entry, …] }`, registered in the OpenAPI document as `id`. */
export function sourceStatusList<K extends string, T extends z.ZodType>(
  key: K,
  entry: T,
  meta: { id: string; description: string },
) {
  return z.object({ [key]: z.array(entry) } as { [k in K]: z.ZodArray<T> }).meta(meta);
}

/** The gateway names of the tools a source currently contributes. */
export const contributedTools = (description: string) => z.array(z.string()).meta({ description });

/** Why the source last failed; null when it did not. */
export const lastError = (description: string) => z.string().nullable().meta({ description });

/** A moment in ISO 8601; null before it first happened. */
export const isoTimeOrNull = (description: string) => z.string().nullable().meta({ description });
