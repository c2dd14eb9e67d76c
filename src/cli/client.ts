/**
 * The CLI's client commands, built on ToolAPI:
 *   a2e-gateway list [--query Q] [--tag T]… [--kind K] [--deferred] [--json]
 *   a2e-gateway call TOOL [--arg key=value]… [--args-json JSON] [--stream] [--timeout S] [--json]
 * Both take --url (A2E_URL, default http://127.0.0.1:8080) and --token (A2E_TOKEN).
 * Exit codes: 0 success, 1 the tool ran and failed, 2 usage, connection or a refused call.
 */
import { ToolAPI, ToolAPIError, type ToolDefinition, type ToolResult } from '../client/index.js';
import { cliFetch } from './http-fetch.js';
import { answerError, postJson } from './json-request.js';
import { LiveView } from './live.js';
import { parseOptions, UsageError } from './usage.js';

export const CLIENT_USAGE = `Client commands (talk to a running gateway):
  list [--query Q] [--tag T]… [--kind K] [--deferred] [--json]
                        List the tools (table of name, kind, tags, description), or search them with --query
  call TOOL [--arg key=value]… [--args-json '{…}'] [--stream] [--timeout S] [--json]
                        Call a tool and print its result's data; --json prints the whole result; --stream shows
                        its events live on a terminal, or prints one JSON event per line otherwise (the result
                        is the last line). A failed command's stdout and stderr are printed before the error.

Options for list and call:
      --url URL         The gateway (env A2E_URL; default http://127.0.0.1:8080)
      --token TOKEN     Bearer token, when the gateway requires one (env A2E_TOKEN)
Exit codes of call: 0 success, 1 the tool failed, 2 usage or connection error, or the gateway refused the call.
`;

/** Where the commands write; a test can hand in its own. */
export interface ClientIo {
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stderr: { write(text: string): unknown };
}

const DEFAULT_URL = 'http://127.0.0.1:8080';
/** The agent_id the CLI's sessions are opened with. */
const CLI_AGENT_ID = 'a2e-gateway-cli';

const common = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Run `list` or `call`; returns the exit code. Every failure is one line on stderr. */
export async function runClientCommand(
  command: 'list' | 'call',
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: ClientIo,
): Promise<number> {
  try {
    return command === 'list' ? await list(argv, env, io) : await call(argv, env, io);
  } catch (err) {
    const message =
      err instanceof ToolAPIError && err.code === 'connection_failed'
        ? `${err.message}; check that it is running, or pass --url (or set A2E_URL)`
        : err instanceof UsageError || err instanceof ToolAPIError
          ? err.message
          : `unexpected error: ${(err as Error).message}`;
    io.stderr.write(`a2e-gateway: ${message}\n`);
    return 2;
  }
}

function connect(values: { url?: string; token?: string }, env: NodeJS.ProcessEnv): ToolAPI {
  const { url, token } = gatewayOf(values, env);
  return new ToolAPI({ baseUrl: url, fetch: cliFetch, ...(token ? { token } : {}) });
}

/** The gateway's URL (checked) and the bearer token, from the options and the environment. */
function gatewayOf(
  values: { url?: string; token?: string },
  env: NodeJS.ProcessEnv,
): { url: string; token: string | undefined } {
  const url = values.url ?? env.A2E_URL ?? DEFAULT_URL;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an http(s) URL such as ${DEFAULT_URL}, got "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`--url must be an http(s) URL such as ${DEFAULT_URL}, got "${url}"`);
  }
  return { url, token: values.token ?? env.A2E_TOKEN };
}

/**
 * Open a session first, so gateways that require one (the default with
 * auth) answer; a gateway without POST /handshake is used without one.
 */
async function openSession(api: ToolAPI): Promise<ToolAPI> {
  try {
    const answer = await api.handshake({ agent_id: CLI_AGENT_ID });
    if (!answer.ok) throw new UsageError(`the gateway refused the handshake: ${answer.reason}`);
  } catch (err) {
    if (!(err instanceof ToolAPIError && err.status === 404)) throw err;
  }
  return api;
}

async function list(argv: string[], env: NodeJS.ProcessEnv, io: ClientIo): Promise<number> {
  const { values } = parseOptions('list', argv, {
    ...common,
    query: { type: 'string', short: 'q' },
    tag: { type: 'string', multiple: true },
    kind: { type: 'string' },
    deferred: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(CLIENT_USAGE);
    return 0;
  }
  // Two plain JSON requests (as ToolAPI's handshake() and list() would send them), without the web fetch machinery.
  const { url, token } = gatewayOf(values, env);
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const session = await postJson(
    url,
    '/handshake',
    { type: 'handshake/req', agent_id: CLI_AGENT_ID, agent_caps: ['tools'], auth_token: token ?? null },
    headers,
  );
  let sessionId = '';
  // A gateway without POST /handshake (404) is used without a session, as openSession() does.
  if (session.status !== 404) {
    if (session.status < 200 || session.status > 299) throw answerError(session, 'POST /handshake');
    const answer = session.json as { ok?: boolean; reason?: string; session_id?: string };
    if (!answer.ok) throw new UsageError(`the gateway refused the handshake: ${answer.reason}`);
    sessionId = answer.session_id ?? '';
  }
  const listed = await postJson(
    url,
    '/tool/list',
    {
      type: 'tool/list/req',
      session_id: sessionId,
      query: values.query ?? '',
      filter_tags: values.tag ?? [],
      filter_kind: values.kind ?? '',
      include_deferred: values.deferred ?? false,
    },
    headers,
  );
  if (listed.status < 200 || listed.status > 299 || listed.json === undefined)
    throw answerError(listed, 'POST /tool/list');
  const tools = ((listed.json as { tools?: ToolDefinition[] }).tools ?? []) as ToolDefinition[];
  if (values.json) io.stdout.write(`${JSON.stringify(tools, null, 2)}\n`);
  else io.stdout.write(toolTable(tools, io.stdout.isTTY ? io.stdout.columns || 80 : Infinity));
  return 0;
}

/** name, kind, tags, description as aligned columns; descriptions are cut to the terminal width. */
export function toolTable(tools: readonly ToolDefinition[], width: number): string {
  if (tools.length === 0) return 'no tools\n';
  const rows = [
    ['NAME', 'KIND', 'TAGS', 'DESCRIPTION'],
    ...tools.map((t) => [t.name, t.kind, t.tags.join(','), oneLine(t.description)]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) => {
      const line =
        `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]!.padEnd(widths[2]!)}  ${r[3]}`.trimEnd();
      return line.length > width ? `${line.slice(0, Math.max(width - 1, 0))}…` : line;
    })
    .join('\n')
    .concat('\n');
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

async function call(argv: string[], env: NodeJS.ProcessEnv, io: ClientIo): Promise<number> {
  const { values, positionals } = parseOptions(
    'call',
    argv,
    {
      ...common,
      arg: { type: 'string', short: 'a', multiple: true },
      'args-json': { type: 'string' },
      stream: { type: 'boolean' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
    },
    true,
  );
  if (values.help) {
    io.stdout.write(CLIENT_USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'call needs a tool name: a2e-gateway call TOOL [--arg key=value]…'
        : `call takes one tool name, got ${positionals.length}: ${positionals.join(' ')}`,
    );
  }
  const toolName = positionals[0]!;
  let timeout: number | undefined;
  if (values.timeout !== undefined) {
    timeout = Number(values.timeout);
    if (!(timeout > 0) || !Number.isFinite(timeout))
      throw new UsageError(`--timeout must be a positive number of seconds, got "${values.timeout}"`);
  }
  const api = await openSession(connect(values, env));
  const args = await buildArguments(api, toolName, values['args-json'], values.arg ?? []);

  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  const live =
    values.stream && io.stdout.isTTY
      ? new LiveView({
          write: (t) => io.stdout.write(t),
          get columns() {
            return io.stdout.columns || 80;
          },
        })
      : undefined;
  let result: ToolResult;
  try {
    result = await api.call(toolName, args, {
      streaming: values.stream ?? false,
      ...(timeout !== undefined ? { timeout } : {}),
      signal: controller.signal,
      onEvent: values.stream ? (e) => (live ? live.onEvent(e) : io.stdout.write(`${JSON.stringify(e)}\n`)) : undefined,
    });
  } catch (err) {
    live?.finish();
    if (controller.signal.aborted) {
      io.stderr.write('a2e-gateway: interrupted; the call was stopped\n');
      return 130;
    }
    throw err;
  } finally {
    process.off('SIGINT', interrupt);
  }
  live?.finish();

  if (values.json) {
    // The whole ToolResult, whatever the outcome (events included when --stream collected them).
    io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else if (values.stream && !live) {
    // Machine-readable: the result is the last line (its events were the lines before).
    io.stdout.write(`${JSON.stringify({ ...result, events: [] })}\n`);
  } else if (result.success) {
    io.stdout.write(formatData(result.data));
  } else {
    writeFailedOutput(result.data, io);
  }
  if (result.success) return 0;
  const ranAndFailed = result.error_code === 'tool_error';
  io.stderr.write(
    `a2e-gateway: ${ranAndFailed ? 'tool failed' : `call refused (${result.error_code})`}: ${oneLine(result.error ?? 'no message')}\n`,
  );
  return ranAndFailed ? 1 : 2;
}

/**
 * A failed command's own output (run_command's `stdout` / `stderr` in data),
 * written where it belongs, before the one-line error: that is what a user
 * looks at first.
 */
function writeFailedOutput(data: unknown, io: ClientIo): void {
  if (data === null || typeof data !== 'object') return;
  const { stdout, stderr } = data as { stdout?: unknown; stderr?: unknown };
  if (typeof stdout === 'string' && stdout) io.stdout.write(stdout.endsWith('\n') ? stdout : `${stdout}\n`);
  if (typeof stderr === 'string' && stderr) io.stderr.write(stderr.endsWith('\n') ? stderr : `${stderr}\n`);
}

function formatData(data: unknown): string {
  if (data === null || data === undefined) return '';
  const text = typeof data === 'string' ? data : JSON.stringify(data, null, 2);
  return text.endsWith('\n') ? text : `${text}\n`;
}

/**
 * `--args-json` first, then each `--arg key=value` on top. Values are typed by
 * the tool's declared parameter (integer, boolean, object, …); keys the tool
 * does not declare are sent as strings, and the gateway says what is wrong.
 */
async function buildArguments(
  api: ToolAPI,
  toolName: string,
  json: string | undefined,
  pairs: string[],
): Promise<Record<string, unknown>> {
  let args: Record<string, unknown> = {};
  if (json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch (err) {
      throw new UsageError(`--args-json is not valid JSON: ${(err as Error).message}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new UsageError('--args-json must be a JSON object, e.g. \'{"path": "README.md"}\'');
    args = parsed as Record<string, unknown>;
  }
  if (pairs.length === 0) return args;
  const tool = (await api.list({ query: toolName, includeDeferred: true })).find((t) => t.name === toolName);
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--arg must look like key=value, got "${pair}"`);
    const key = pair.slice(0, eq);
    const param = tool?.input_parameters.find((p) => p.name === key);
    args[key] = coerce(key, pair.slice(eq + 1), param?.type ?? 'string');
  }
  return args;
}

function coerce(key: string, raw: string, type: string): unknown {
  switch (type) {
    case 'integer':
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n))) {
        throw new UsageError(`--arg ${key} must be ${type === 'integer' ? 'an integer' : 'a number'}, got "${raw}"`);
      }
      return n;
    }
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw new UsageError(`--arg ${key} must be true or false, got "${raw}"`);
    case 'object':
    case 'array':
      try {
        return JSON.parse(raw);
      } catch {
        throw new UsageError(`--arg ${key} must be JSON (an ${type}), got "${raw}"`);
      }
    default:
      return raw;
  }
}
