/** Types of scripts/config-docs.mjs, for the test that checks docs/configuration.md. */
import type { ZodType } from 'zod';

export const CONFIG_DOCS_PATH: string;
/** Key path → the comment on that key in the sources. */
export function readDescriptions(root?: string): Map<string, string>;
/** docs/configuration.md for a GatewayConfig schema, and the keys that have no description. */
export function renderConfigDocs(
  schema: ZodType,
  descriptions?: Map<string, string>,
): { text: string; missing: string[] };
