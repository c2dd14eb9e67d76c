/**
 * Every door through which a caller reaches tools, as rows of one table, so
 * one test sends the same request through all of them under every auth and
 * session setting (test/security/doors.test.ts). A new door (MCP, A2A
 * server, …) adds a row to `DOORS`: how to attempt the echo call (or read
 * its result) through it, with a credential or none, and what it came to.
 */
import { A2eTestClient } from './a2e-client.js';
import { openSse, postJson } from './server.js';

/** Who knocks: a token (or none) and whether it opens a session (handshake) first, as the door's clients do. */
export interface Knock {
  /** A label for failure messages. */
  name: string;
  token: string | undefined;
  session: boolean;
}

/** The gateway under test. */
export interface DoorGateway {
  /** Base URL (server.base_path included). */
  url: string;
  /** Whether `auth` is configured. */
  auth: boolean;
  sessionsRequired: boolean;
  /** A token every tool is allowed to (auth only): opens the resources other callers then try to use. */
  ownerToken: string | undefined;
  /** Whether the token's allow/deny lets it call `TOOL` (auth only). */
  mayCall(token: string): boolean;
}

/** What an attempt came to: the tool ran (or was listed), or which refusal, with the evidence. */
export type Result = 'ran' | 'unauthorized' | 'denied' | 'forbidden' | 'not_found' | 'other';
export interface Outcome {
  result: Result;
  evidence: string;
}

export interface Door {
  name: string;
  attempt(gw: DoorGateway, who: Knock): Promise<Outcome>;
  /**
   * The outcome this door must give. Doors that run or list tools share one
   * rule (`toolRule`); doors onto a resource someone else opened, another
   * (`resourceRule`).
   */
  expects(gw: DoorGateway, who: Knock): Result;
}

/** The tool every door tries: echo returns its text. */
export const TOOL = 'echo';
export const TEXT = 'through-the-door';

/**
 * One rule for every door that runs or lists tools: with auth a credential
 * is needed and the token's allow/deny decides; with sessions required a
 * session is needed; else the tool runs.
 */
export function toolRule(gw: DoorGateway, who: Knock): Result {
  if (gw.auth && who.token === undefined) return 'unauthorized';
  if (gw.sessionsRequired && !who.session) return 'unauthorized';
  if (gw.auth && !gw.mayCall(who.token!)) return 'denied';
  return 'ran';
}

/**
 * For a resource `owner` opened (a call, a transport session): without auth
 * anyone holding its id or URL may use it; with auth only its owner, others
 * get 401 without a credential and `foreignWithToken` with another token.
 */
export const resourceRule =
  (foreignWithToken: Result) =>
  (gw: DoorGateway, who: Knock): Result => {
    if (!gw.auth) return 'ran';
    if (who.token === gw.ownerToken) return 'ran';
    return who.token === undefined ? 'unauthorized' : foreignWithToken;
  };

const bearer = (token: string | undefined): Record<string, string> =>
  token ? { Authorization: `Bearer ${token}` } : {};

/** A REST session for `who` when it opens one: POST /handshake with its token. */
async function restSession(gw: DoorGateway, who: Pick<Knock, 'token' | 'session'>): Promise<string | Outcome> {
  if (!who.session) return '';
  const hs = await postJson(
    `${gw.url}/handshake`,
    { type: 'handshake/req', agent_id: 'door-test', agent_caps: ['tools'] },
    bearer(who.token),
  );
  if (hs.status !== 200 || hs.json.ok !== true) return classify(hs.status, hs.json, 'POST /handshake');
  return hs.json.session_id as string;
}

/** An HTTP answer (or a transport message) as a Result. */
export function classify(status: number, json: any, where: string): Outcome {
  const evidence = `${where} → ${status} ${JSON.stringify(json).slice(0, 300)}`;
  if (status === 401 || json?.code === 'unauthorized') return { result: 'unauthorized', evidence };
  if (json?.code === 'tool_denied') return { result: 'denied', evidence };
  if (status === 403) return { result: 'forbidden', evidence };
  if (status === 404 || json?.code === 'not_found') return { result: 'not_found', evidence };
  return { result: 'other', evidence };
}

/** A tool/call/resp (REST or transport): ran when it is echo's successful answer. */
function callAnswer(status: number, json: any, where: string): Outcome {
  const data = json?.type === 'tool/call/resp' ? json.data : undefined;
  if (data?.success === true && data.data?.text === TEXT) return { result: 'ran', evidence: where };
  return classify(status, json, where);
}

/** A tool/list/resp: ran when echo is listed, denied when the list leaves it out. */
function listAnswer(status: number, json: any, where: string): Outcome {
  if (json?.type !== 'tool/list/resp') return classify(status, json, where);
  const names = (json.tools as { name: string }[]).map((t) => t.name);
  return names.includes(TOOL)
    ? { result: 'ran', evidence: where }
    : { result: 'denied', evidence: `${where}: listed ${names.join(', ')}` };
}

const callBody = (sessionId: string, extra: Record<string, unknown> = {}) => ({
  type: 'tool/call/req',
  tool_name: TOOL,
  arguments: { text: TEXT },
  session_id: sessionId,
  ...extra,
});

/** The last `data:` of an SSE answer, parsed. */
async function lastFrame(url: string, init: RequestInit): Promise<{ status: number; json: any }> {
  const stream = await openSse(url, init);
  const events = await stream.rest();
  return { status: stream.status, json: events.at(-1)?.json };
}

/** Open a transport session for `who`: POST /session with its token, the stream, and a handshake when it opens a session. */
async function transportSession(
  gw: DoorGateway,
  who: Pick<Knock, 'token' | 'session'>,
): Promise<A2eTestClient | Outcome> {
  const base = `${gw.url}/a2e/v1`;
  const open = await fetch(`${base}/session`, { method: 'POST', headers: bearer(who.token) });
  const body = await open.json().catch(() => ({}));
  if (open.status !== 200) return classify(open.status, body, 'POST /a2e/v1/session');
  const client = A2eTestClient.forSession(base, (body as { session_id: string }).session_id, bearer(who.token));
  const stream = await client.openStream();
  if (stream.status !== 200)
    return classify(stream.status, await stream.json().catch(() => ({})), 'GET /a2e/v1/stream');
  if (who.session) {
    const hs = await client.request({
      type: 'handshake/req',
      agent_id: 'door-test',
      agent_caps: ['tools'],
      auth_token: '',
    });
    if (hs.response.ok !== true) {
      await client.dropStream();
      // A refused handshake (ok: false) is the transport's way of refusing a credential.
      return { result: 'unauthorized', evidence: `handshake/req → ${JSON.stringify(hs.response).slice(0, 300)}` };
    }
  }
  return client;
}

/**
 * Send one message on a transport session (POST /send with the client's
 * credential) and read its answer on the stream; a refused POST /send is
 * the outcome itself.
 */
async function transportRequest(
  client: A2eTestClient,
  message: Record<string, unknown>,
  read: typeof callAnswer,
): Promise<Outcome> {
  try {
    const id = `door-${Math.random().toString(36).slice(2)}`;
    const answered = client.waitFor(
      (m) => m.req_id === id && m.type !== 'tool/event',
      20_000,
      `the answer to ${String(message.type)}`,
    );
    answered.catch(() => {}); // not awaited when the send is refused
    const sent = await client.send({ ...message, id });
    if (sent.status !== 202) return classify(sent.status, await sent.json().catch(() => ({})), 'POST /a2e/v1/send');
    return read(200, await answered, `${String(message.type)} on /a2e/v1`);
  } finally {
    await client.dropStream();
  }
}

/**
 * Doors without A2E sessions (MCP, the A2A agent): the bearer token is the
 * credential and its allow list decides; `sessions.required` is an A2E rule
 * that does not apply to them (docs/security-sessions.md).
 */
export function bearerRule(gw: DoorGateway, who: Knock): Result {
  if (gw.auth && who.token === undefined) return 'unauthorized';
  if (gw.auth && !gw.mayCall(who.token!)) return 'denied';
  return 'ran';
}

/** A JSON-RPC answer (JSON or the last frame of an SSE answer) of the MCP and A2A doors. */
async function jsonRpc(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; json: any }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  if (!(r.headers.get('content-type') ?? '').includes('text/event-stream'))
    return { status: r.status, json: text ? JSON.parse(text) : undefined };
  const frames = text
    .split(/\n\n/)
    .map((f) =>
      f
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n'),
    )
    .filter(Boolean);
  return { status: r.status, json: frames.length ? JSON.parse(frames.at(-1)!) : undefined };
}

/** A JSON-RPC refusal: the gateway's code rides in error.data (tool_denied, unauthorized, …). */
function rpcAnswer(status: number, json: any, where: string, ran: (result: any) => boolean): Outcome {
  const evidence = `${where} → ${status} ${JSON.stringify(json).slice(0, 300)}`;
  if (json?.result !== undefined && ran(json.result)) return { result: 'ran', evidence };
  const code = json?.error?.data?.error_code ?? json?.error?.data?.code;
  if (code === 'tool_denied') return { result: 'denied', evidence };
  if (code === 'unauthorized') return { result: 'unauthorized', evidence };
  return classify(status, json, where);
}

export const DOORS: Door[] = [
  {
    name: 'POST /tool/call (JSON)',
    expects: toolRule,
    async attempt(gw, who) {
      const session = await restSession(gw, who);
      if (typeof session !== 'string') return session;
      const r = await postJson(`${gw.url}/tool/call`, callBody(session), bearer(who.token));
      return callAnswer(r.status, r.json, 'POST /tool/call');
    },
  },
  {
    name: 'POST /tool/call (SSE)',
    expects: toolRule,
    async attempt(gw, who) {
      const session = await restSession(gw, who);
      if (typeof session !== 'string') return session;
      const r = await lastFrame(`${gw.url}/tool/call`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...bearer(who.token) },
        body: JSON.stringify(callBody(session, { streaming: true })),
      });
      if (r.json === undefined) {
        // Refused before the stream started: an ordinary JSON error.
        const again = await postJson(`${gw.url}/tool/call`, callBody(session, { streaming: true }), {
          Accept: 'text/event-stream',
          ...bearer(who.token),
        });
        return callAnswer(again.status, again.json, 'POST /tool/call (Accept: text/event-stream)');
      }
      return callAnswer(r.status, r.json, 'POST /tool/call (SSE)');
    },
  },
  {
    name: 'POST /tool/list',
    expects: toolRule,
    async attempt(gw, who) {
      const session = await restSession(gw, who);
      if (typeof session !== 'string') return session;
      const r = await postJson(
        `${gw.url}/tool/list`,
        { type: 'tool/list/req', session_id: session },
        bearer(who.token),
      );
      return listAnswer(r.status, r.json, 'POST /tool/list');
    },
  },
  {
    name: 'POST /tool/calls, then its events_url',
    expects: toolRule,
    async attempt(gw, who) {
      const session = await restSession(gw, who);
      if (typeof session !== 'string') return session;
      const r = await postJson(`${gw.url}/tool/calls`, callBody(session), bearer(who.token));
      if (r.status !== 202) return classify(r.status, r.json, 'POST /tool/calls');
      const events = await lastFrame(new URL(r.json.events_url as string, gw.url).href, { headers: bearer(who.token) });
      return callAnswer(events.status, events.json, 'GET events_url');
    },
  },
  {
    name: "GET a call's events_url without its access_token (a call the owner started)",
    // Another token is told what a missing call is told: ids cannot be probed (issue 20, finding 7).
    expects: resourceRule('not_found'),
    async attempt(gw, who) {
      const owner = { token: gw.ownerToken, session: gw.sessionsRequired };
      const session = await restSession(gw, owner);
      if (typeof session !== 'string') throw new Error(`the owner could not open a session: ${session.evidence}`);
      const started = await postJson(`${gw.url}/tool/calls`, callBody(session), bearer(owner.token));
      if (started.status !== 202) throw new Error(`the owner could not start a call: ${JSON.stringify(started.json)}`);
      const url = new URL(started.json.events_url as string, gw.url);
      url.searchParams.delete('access_token');
      const r = await fetch(url, { headers: { Accept: 'text/event-stream', ...bearer(who.token) } });
      if (r.status !== 200)
        return classify(r.status, await r.json().catch(() => ({})), 'GET events_url without access_token');
      const events = await lastFrame(url.href, { headers: bearer(who.token) });
      await r.body?.cancel();
      return callAnswer(events.status, events.json, 'GET events_url without access_token');
    },
  },
  {
    name: 'A2E transport: tool/call/req',
    expects: toolRule,
    async attempt(gw, who) {
      const client = await transportSession(gw, who);
      if (!(client instanceof A2eTestClient)) return client;
      return transportRequest(client, callBody(''), callAnswer);
    },
  },
  {
    name: 'A2E transport: tool/list/req',
    expects: toolRule,
    async attempt(gw, who) {
      const client = await transportSession(gw, who);
      if (!(client instanceof A2eTestClient)) return client;
      return transportRequest(client, { type: 'tool/list/req' }, listAnswer);
    },
  },
  {
    name: 'A2E transport: /send and /stream on a session the owner opened and shook hands on',
    expects: resourceRule('forbidden'),
    async attempt(gw, who) {
      const owned = await transportSession(gw, { token: gw.ownerToken, session: true });
      if (!(owned instanceof A2eTestClient)) throw new Error(`the owner could not open a session: ${owned.evidence}`);
      await owned.dropStream();
      // The intruder knows the session id, and presents its own credential (or none).
      const intruder = A2eTestClient.forSession(owned.base, owned.sessionId, bearer(who.token));
      // Both routes must refuse alike: a POST /send refused while GET /stream is served would still leak the answers.
      const sent = await intruder.send({ type: 'ping' });
      const stream = await intruder.openStream();
      if (stream.status !== 200) {
        const streamOutcome = classify(stream.status, await stream.json().catch(() => ({})), 'GET /a2e/v1/stream');
        const sendOutcome = classify(sent.status, await sent.json().catch(() => ({})), 'POST /a2e/v1/send');
        return sendOutcome.result === streamOutcome.result
          ? streamOutcome
          : { result: 'other', evidence: `${sendOutcome.evidence}; ${streamOutcome.evidence}` };
      }
      return transportRequest(intruder, callBody(''), callAnswer);
    },
  },
  {
    name: 'MCP: tools/call at POST /mcp',
    expects: bearerRule,
    async attempt(gw, who) {
      const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: TOOL, arguments: { text: TEXT } } };
      const r = await jsonRpc(`${gw.url}/mcp`, body, { 'MCP-Protocol-Version': '2025-06-18', ...bearer(who.token) });
      return rpcAnswer(
        r.status,
        r.json,
        'POST /mcp tools/call',
        (result) => result.isError !== true && JSON.stringify(result).includes(TEXT),
      );
    },
  },
  {
    name: 'A2A: message/send at POST /a2a',
    expects: bearerRule,
    async attempt(gw, who) {
      const message = {
        kind: 'message',
        messageId: `door-${Math.random().toString(36).slice(2)}`,
        role: 'user',
        parts: [{ kind: 'data', data: { text: TEXT } }],
        metadata: { skillId: TOOL },
      };
      const r = await jsonRpc(
        `${gw.url}/a2a`,
        { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message } },
        bearer(who.token),
      );
      return rpcAnswer(
        r.status,
        r.json,
        'POST /a2a message/send',
        (task) => task.status?.state === 'completed' && JSON.stringify(task.artifacts ?? []).includes(TEXT),
      );
    },
  },
];
