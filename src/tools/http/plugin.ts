/** The HTTP tool plugin: http_request, guarded against server-side request forgery. */
import type { ToolContext, ToolPlugin } from '../../engine/index.js';
import type { ToolDefinitionInput } from '../../protocol/index.js';
import type { NativeContext } from '../native-context.js';
import { CredentialMatcher } from '../../security/credential-match.js';
import { AddressPolicy } from './address.js';
import type { HttpConfig } from './config.js';
import type { Agent } from 'undici';
import { httpRequestTool, type HttpArgs } from './request.js';

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

export const HTTP_REQUEST: ToolDefinitionInput = {
  name: 'http_request',
  // Any method to any allowed host: it may change things out there.
  mcp: { annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } },
  description:
    'Make an HTTP or HTTPS request and return the status, headers and body. Redirects are followed (each hop checked). Loopback, private, link-local and other non-public addresses are refused unless allowed in tools.http. Emits progress events (bytes received) on large responses.',
  input_parameters: [
    { name: 'method', type: 'string', description: 'HTTP method (default GET)', enum: METHODS },
    { name: 'url', type: 'string', description: 'Absolute http:// or https:// URL', required: true },
    { name: 'headers', type: 'object', description: 'Request headers, name → string value' },
    { name: 'body', type: 'string', description: 'Request body as text (not for GET or HEAD)' },
    {
      name: 'timeout',
      type: 'number',
      description:
        'Seconds before the request is abandoned (default tools.http.timeout_s; the call timeout also applies)',
    },
  ],
  output_parameters: [
    { name: 'url', type: 'string', description: 'The final URL, after redirects' },
    { name: 'status', type: 'integer', description: 'HTTP status code' },
    {
      name: 'headers',
      type: 'object',
      description: 'Response headers (lower-case names; repeated ones joined with ", ")',
    },
    { name: 'body', type: 'string', description: 'Response body: text, or base64 (see body_encoding)' },
    {
      name: 'body_encoding',
      type: 'string',
      description: '"utf8" when the content type is textual and the body valid UTF-8, else "base64"',
      enum: ['utf8', 'base64'],
    },
    { name: 'bytes', type: 'integer', description: 'Body bytes returned' },
    { name: 'truncated', type: 'boolean', description: 'True when the body was cut at tools.http.max_response_bytes' },
    { name: 'redirects', type: 'integer', description: 'Redirects followed' },
  ],
  tags: ['http', 'web', 'network', 'fetch'],
  idempotent: false,
  streaming: true,
  kind: 'native',
};

export function httpPlugin(config: HttpConfig, native: NativeContext): ToolPlugin {
  const policy = new AddressPolicy(config);
  // undici (over a hundred modules) is loaded by the first http_request, not at start-up.
  let agent: Agent | undefined;
  let loading: Promise<Agent> | undefined;
  const loadAgent = () =>
    (loading ??= import('./dispatcher.js').then(({ createGuardedAgent }) => (agent = createGuardedAgent(policy))));
  // An unset variable fails the start, naming the entry (a credential that is not there cannot be injected).
  const credentials =
    config.credentials.length > 0 ? new CredentialMatcher(config.credentials, native.env, loadAgent) : null;
  return {
    name: 'http',
    listTools: () => [HTTP_REQUEST],
    executeTool(_name: string, args: Record<string, unknown>, ctx: ToolContext) {
      if (agent) return httpRequestTool(agent, config, args as unknown as HttpArgs, ctx, credentials);
      return loadAgent().then((a) => httpRequestTool(a, config, args as unknown as HttpArgs, ctx, credentials));
    },
    async stop() {
      if (loading) await (await loading).destroy();
    },
  };
}
