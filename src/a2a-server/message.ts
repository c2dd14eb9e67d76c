/**
 * Which tool an A2A message asks for, and with which arguments. Never a
 * guess: the skill is named by `metadata.skillId` (what A2A clients,
 * this gateway's own included, send) or by a data part
 * `{"tool_name", "arguments"}`; else `a2a_server.default_skill` when the
 * operator set one; otherwise the message is refused with the list of skills.
 *
 * Arguments: a data part's object; or, for a tool with exactly one required
 * string parameter, the message's text (so a gateway's A2A-backed tool,
 * which sends its `task` as text, reaches another gateway's tools).
 */
import { partsText, type DialectName } from '../wire/a2a.js';
import type { ToolDefinition } from '../protocol/index.js';
import { RPC } from './jsonrpc.js';
import { RpcError } from '../wire/jsonrpc.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ToolRequest {
  toolName: string;
  arguments: Json;
  messageId: string;
  /** The message's contextId ("" when it has none). */
  contextId: string;
  metadata: Json;
}

/** The data of a data part, both dialects (`{data}` in 1.0, `{kind: "data", data}` in 0.3). */
function dataOf(part: unknown): unknown {
  if (!isObject(part) || part.data === undefined) return undefined;
  return part.kind === undefined || part.kind === 'data' ? part.data : undefined;
}

const ROLES = new Set(['ROLE_USER', 'ROLE_AGENT', 'user', 'agent']);
/** What a part carries, by dialect: 0.3 tags it with `kind`; 1.0 holds one member per content. */
const KINDS_03 = new Set(['text', 'file', 'data']);
const CONTENT_10 = ['text', 'data', 'file', 'raw', 'url'];

/**
 * Check the fields every A2A message must have (messageId, role, at least one
 * part, each part of a kind the dialect knows), before anything is started:
 * a message missing one is invalid params (-32602), not a task that fails.
 */
export function checkMessage(message: unknown, dialect: DialectName): void {
  const bad = (what: string) => new RpcError(RPC.INVALID_PARAMS, `params.message ${what}`);
  if (!isObject(message)) throw bad('must be an A2A message: {messageId, role, parts}');
  if (!Array.isArray(message.parts) || message.parts.length === 0) throw bad('must have a non-empty "parts" array');
  if (typeof message.messageId !== 'string' || !message.messageId)
    throw bad('must have a "messageId" (a non-empty string the client chooses)');
  if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
    throw bad(`must have a "role": ${dialect === '1.0' ? '"ROLE_USER"' : '"user"'}`);
  }
  message.parts.forEach((part, i) => {
    const known =
      isObject(part) &&
      (dialect === '0.3'
        ? typeof part.kind === 'string' && KINDS_03.has(part.kind)
        : CONTENT_10.some((k) => part[k] !== undefined));
    if (!known) {
      throw bad(
        dialect === '0.3'
          ? `parts[${i}] must have "kind": "text", "file" or "data"`
          : `parts[${i}] must hold one of ${CONTENT_10.map((k) => `"${k}"`).join(', ')}`,
      );
    }
  });
}

const listed = (skills: readonly string[]) =>
  skills.length ? skills.map((s) => `"${s}"`).join(', ') : '(none: this caller may not call any tool)';

/**
 * Read the message of SendMessage/SendStreamingMessage params.
 * `tool(name)` is the definition of a tool the caller may call (undefined
 * otherwise: the engine then refuses it with its own error); `skills()` the
 * names the caller may call, for error messages; `defaultSkill` the skill of
 * a message that names none (a2a_server.default_skill).
 */
export function readToolRequest(
  params: Json,
  tool: (name: string) => ToolDefinition | undefined,
  skills: () => string[],
  defaultSkill?: string,
): ToolRequest {
  const message = params.message;
  if (!isObject(message) || !Array.isArray(message.parts)) {
    throw new RpcError(RPC.INVALID_PARAMS, 'params.message must be an A2A message with a "parts" array');
  }
  const metadata = isObject(message.metadata) ? message.metadata : {};
  const requestMetadata = isObject(params.metadata) ? params.metadata : {};
  const skillId = [metadata.skillId, requestMetadata.skillId].find(
    (s): s is string => typeof s === 'string' && s !== '',
  );
  const data = message.parts.map(dataOf).find((d) => d !== undefined);
  const call = isObject(data) && typeof data.tool_name === 'string' ? data : undefined;
  const messageId = typeof message.messageId === 'string' ? message.messageId : '';
  const contextId = typeof message.contextId === 'string' ? message.contextId : '';

  const toolName = skillId ?? (call?.tool_name as string | undefined) ?? defaultSkill;
  if (!toolName) {
    throw new RpcError(
      RPC.INVALID_PARAMS,
      `the message does not say which skill to run: set message.metadata.skillId to one of ${listed(skills())}, ` +
        'or send a data part {"tool_name": "<skill>", "arguments": {…}} (the operator may also set a2a_server.default_skill)',
      { skills: skills() },
    );
  }
  if (call && skillId && call.tool_name !== skillId) {
    throw new RpcError(
      RPC.INVALID_PARAMS,
      `message.metadata.skillId names "${skillId}" but the data part's tool_name names "${call.tool_name as string}"; name one skill`,
    );
  }
  return {
    toolName,
    arguments: argumentsOf(toolName, call, data, message.parts, tool),
    messageId,
    contextId,
    metadata,
  };
}

function argumentsOf(
  toolName: string,
  call: Json | undefined,
  data: unknown,
  parts: unknown[],
  tool: (name: string) => ToolDefinition | undefined,
): Json {
  if (call) {
    if (call.arguments === undefined) return {};
    if (!isObject(call.arguments)) {
      throw new RpcError(
        RPC.INVALID_PARAMS,
        `the data part's "arguments" must be an object of the arguments of "${toolName}"`,
      );
    }
    return call.arguments;
  }
  if (data !== undefined) {
    if (!isObject(data))
      throw new RpcError(RPC.INVALID_PARAMS, `the data part must be an object: the arguments of "${toolName}"`);
    return data;
  }
  const definition = tool(toolName);
  // A tool this caller may not call, or that does not exist: the engine refuses it with its own error.
  if (!definition) return {};
  const params = definition.input_parameters;
  const text = partsText(parts);
  const required = params.filter((p) => p.required);
  if (required.length === 1 && required[0]!.type === 'string') return { [required[0]!.name]: text };
  if (params.length === 0) return {};
  const names = params.map((p) => `${p.name} (${p.type}${p.required ? ', required' : ''})`).join(', ');
  throw new RpcError(
    RPC.INVALID_PARAMS,
    `"${toolName}" takes ${names}: send its arguments as a data part (an object), not as text`,
    { problems: [{ path: 'message.parts', message: 'expected a data part with the arguments object' }] },
  );
}
