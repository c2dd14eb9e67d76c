/**
 * Pieces of log lines written as JSON members text (`,"key":value`), for the
 * lines built by hand (call-line.ts): what is the same for every call of a
 * tool is written once, when the tool is registered.
 */
import type { ToolDefinition } from '../protocol/index.js';

/** `,"key":value` as JSON.stringify writes a member of an object ('' for a value it leaves out, like undefined). */
export function member(key: string, value: unknown): string {
  const json = JSON.stringify(value) as string | undefined;
  return json === undefined ? '' : `,"${key}":${json}`;
}

/** A tool's `,"tool":…,"kind":…` members, as its calls' outcome lines carry them. */
export function toolLineMembers(definition: Pick<ToolDefinition, 'name' | 'kind'>): string {
  return `${member('tool', definition.name)}${member('kind', definition.kind)}`;
}
