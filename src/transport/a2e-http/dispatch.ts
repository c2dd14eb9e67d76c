/**
 * Incoming A2E messages → the engine → outgoing messages on the session's
 * stream. The same validation, policy, timeouts and audit as the REST
 * routes, because both end in `Engine.list` / `Engine.start`.
 */
import {
  GatewayError,
  LIST_TOOLS_HINT,
  TOOLS_CAPABILITY,
  asGatewayError,
  errorMessage,
  type Admitted,
  type Call,
  type Caller,
  type Engine,
  type Logger,
  type Session,
  type SessionManager,
  type SharedSessionStore,
  type StopReason,
} from '../../engine/index.js';
import {
  HandshakeRequest,
  PROTOCOL_VERSION,
  Ping,
  Shutdown,
  ToolCallRequest,
  ToolListRequest,
  newId,
  nowTs,
  truncateText,
  FIELD_LIMITS,
} from '../../protocol/index.js';
import { checkMessage, decodeMessage, type MessageWording } from '../../engine/message-reader.js';
import type { HandshakeAuth } from './auth.js';
// The sessions dispatch serves: this process's (session.ts) or a shared store's.
import type { DispatchSession as TransportSession } from './session.js';

export interface DispatchDeps {
  engine: Engine;
  sessions: SessionManager;
  authenticate: HandshakeAuth;
  /** Auth is configured: a session no token opened needs a successful handshake before tool messages. */
  authRequired: boolean;
  /** `sessions.required`: every session needs a successful handshake before tool messages. */
  sessionsRequired: boolean;
  logger: Logger;
  /** `limits.max_json_depth`: messages nesting deeper are refused before they are parsed. */
  maxJsonDepth: number;
  /** Epoch ms the gateway started (for pong.uptime_seconds). */
  startedAt: number;
  /** A call's events wait inside the call while this many frames are queued. */
  eventRoom: number;
  /** Close a session (stop its calls, end its stream, forget it). */
  closeSession(session: TransportSession, reason: StopReason): Promise<void>;
}

const MESSAGE_TYPES = ['handshake/req', 'ping', 'shutdown', 'tool/list/req', 'tool/call/req'];
const MESSAGE: MessageWording = {
  subject: 'the message',
  invalid: 'invalid message',
  emptyHint: 'send one JSON message per POST /send',
  objectHint: 'a JSON object with a "type"',
};

/** Handle one message body received on POST /send. Replies go to the session's outbox. */
export async function dispatch(deps: DispatchDeps, session: TransportSession, body: Uint8Array): Promise<void> {
  let reqId = '';
  let capability = '';
  try {
    const json = decodeMessage(body, MESSAGE, deps.maxJsonDepth);
    // An over-long id is refused by the schema; it is not echoed in the refusal either.
    reqId = typeof json.id === 'string' && json.id.length <= FIELD_LIMITS.id ? json.id : '';
    const type = json.type;
    if (typeof type === 'string' && type.startsWith('tool/')) capability = TOOLS_CAPABILITY;
    switch (type) {
      case 'handshake/req':
        return await handshake(deps, session, checkMessage(HandshakeRequest, json, MESSAGE));
      case 'ping': {
        const ping = checkMessage(Ping, json, MESSAGE);
        return reply(session, {
          type: 'pong',
          ...envelope(),
          req_id: ping.id,
          uptime_seconds: (Date.now() - deps.startedAt) / 1000,
        });
      }
      case 'shutdown':
        return void drainThenClose(deps, session, checkMessage(Shutdown, json, MESSAGE).timeout);
      case 'tool/list/req': {
        const req = checkMessage(ToolListRequest, json, MESSAGE);
        const found = handshakeOf(deps, session);
        const caller = gate(deps, session, req.session_id, found instanceof Promise ? await found : found);
        return reply(session, {
          type: 'tool/list/resp',
          ...envelope(),
          req_id: req.id,
          tools: deps.engine.list(req, caller),
        });
      }
      case 'tool/call/req': {
        const started = startCall(deps, session, checkMessage(ToolCallRequest, json, MESSAGE), body.byteLength);
        if (started) await started;
        return;
      }
      default:
        throw new GatewayError(
          'invalid_request',
          typeof type === 'string'
            ? `unknown message type "${truncateText(type, 64)}"; this gateway handles ${MESSAGE_TYPES.join(', ')}`
            : `the message has no "type"; send one of ${MESSAGE_TYPES.join(', ')}`,
        );
    }
  } catch (err) {
    const e = asGatewayError(err);
    if (e.code === 'internal')
      deps.logger.error({ err, session_ref: session.binding.ref }, 'A2E transport message failed');
    const message = errorMessage(e, reqId, capability);
    // On this door tools are listed with a message, not with POST /tool/list.
    if (e.code === 'unknown_tool')
      message.message = message.message.replace(LIST_TOOLS_HINT, 'Send a tool/list/req to see the available tools.');
    reply(session, message);
  }
}

function envelope(): { id: string; version: string; ts: number } {
  return { id: newId(), version: PROTOCOL_VERSION, ts: nowTs() };
}

function reply(session: TransportSession, message: object): void {
  session.outbox.push(JSON.stringify(message));
}

async function handshake(deps: DispatchDeps, session: TransportSession, req: HandshakeRequest): Promise<void> {
  // A new handshake replaces the previous one, whatever its outcome.
  const previous = session.handshakeId;
  session.handshakeId = undefined;
  if (previous) await deps.sessions.end(previous);
  const { binding } = session;
  let principal = binding.principal;
  // A session its bearer token opened is authenticated already; an auth_token, when sent, must be that token.
  if (req.auth_token || binding.principal === null) {
    let outcome;
    try {
      outcome = await deps.authenticate(req.auth_token || null);
    } catch (err) {
      deps.logger.error({ err }, 'handshake authentication failed');
      outcome = { ok: false as const, reason: 'the gateway could not check the token (it was logged); retry later' };
    }
    if (!outcome.ok) return reply(session, deps.sessions.refuse(req, outcome.reason));
    const as = binding.handshakePrincipal(outcome.principal);
    if ('reason' in as) return reply(session, deps.sessions.refuse(req, as.reason));
    principal = as.principal;
  }
  const opened = deps.sessions.open(req, principal, binding.handshakeOwner(principal));
  const resp = opened instanceof Promise ? await opened : opened;
  binding.handshakeDone(principal);
  session.handshakeId = resp.session_id;
  // Only what was asked for and is served; SessionManager also lists unserved A2E names as enabled: false.
  reply(session, { ...resp, accepted_caps: resp.accepted_caps.filter((c) => c.enabled) });
}

/**
 * Who is calling, from the session's handshake. Before one, a session calls
 * as the token that opened it (none without auth), as on the REST routes,
 * unless sessions are required or no token opened it on a gateway with auth;
 * a handshake that did not negotiate "tools" gets tool_denied.
 */
function gate(deps: DispatchDeps, session: TransportSession, claimed: string, hs: Session | undefined): Caller {
  if (!hs) {
    const { principal, boundBy } = session.binding;
    const tokenOpened = boundBy === 'bearer';
    if (session.handshakeId && deps.sessions.shared?.lostAt?.() !== undefined) throw handshakeLost();
    if (session.handshakeId || deps.sessionsRequired || (deps.authRequired && !tokenOpened)) {
      throw new GatewayError(
        'unauthorized',
        session.handshakeId
          ? 'the handshake of this session expired (or the shared store lost it); send handshake/req again'
          : deps.authRequired && !tokenOpened
            ? 'this gateway requires a handshake first; send handshake/req with your auth_token and agent_caps ["tools"]'
            : 'this gateway requires a handshake first (sessions.required); send handshake/req with agent_caps ["tools"]',
      );
    }
    return { sessionId: '', principal };
  }
  if (!hs.capabilities.has('tools')) {
    throw new GatewayError(
      'tool_denied',
      'this session did not negotiate the "tools" capability; send handshake/req again with "tools" in agent_caps',
    );
  }
  if (claimed && claimed !== hs.id) {
    throw new GatewayError(
      'invalid_request',
      `session_id "${claimed}" is not this connection's session; send "${hs.id}" (from handshake/resp) or leave it empty`,
    );
  }
  return { sessionId: hs.id, principal: hs.principal, capabilities: hs.capabilities };
}

/** The handshake session is missing, and the shared store lost its data since it could have been opened: retryable after a new handshake. */
function handshakeLost(): GatewayError {
  return new GatewayError(
    'unauthorized',
    'the shared store (Redis) lost its data (restarted without persistence), and the handshake of this session with it (unless it had expired); ' +
      'send handshake/req again, then send this request again',
    { retryable: true, detail: { store: 'redis' } },
  );
}

/** The session's handshake session, if it has a live one (a round trip when sessions are shared). */
function handshakeOf(
  deps: DispatchDeps,
  session: TransportSession,
): Session | undefined | Promise<Session | undefined> {
  return session.handshakeId ? deps.sessions.find(session.handshakeId) : undefined;
}

function startCall(
  deps: DispatchDeps,
  session: TransportSession,
  req: ToolCallRequest,
  bytes: number,
): void | Promise<void> {
  if (session.state !== 'open') {
    throw new GatewayError(
      'unavailable',
      'this session is shutting down (shutdown was sent); open a new session for new calls',
    );
  }
  const shared = deps.sessions.shared;
  const { handshakeId, binding } = session;
  if (shared && shared.needed(binding.principal, handshakeId ?? ''))
    return startShared(deps, session, req, bytes, shared);
  // max_parallel per session is enforced by the engine's admission, as for every door.
  const caller = gate(deps, session, req.session_id, handshakeId ? deps.sessions.get(handshakeId) : undefined);
  begin(deps, session, req, bytes, caller);
}

/** startCall with sessions in a shared store: the handshake session's lookup and the call's admission in one round trip. */
async function startShared(
  deps: DispatchDeps,
  session: TransportSession,
  req: ToolCallRequest,
  bytes: number,
  shared: SharedSessionStore,
): Promise<void> {
  const handshakeId = session.handshakeId ?? '';
  const outcome = await shared.admitCall(session.binding.principal, handshakeId);
  let caller: Caller;
  try {
    caller = gate(deps, session, req.session_id, outcome?.session);
  } catch (err) {
    if (outcome && 'release' in outcome.admitted) outcome.admitted.release();
    throw err;
  }
  begin(deps, session, req, bytes, caller, outcome?.admitted);
}

function begin(
  deps: DispatchDeps,
  session: TransportSession,
  req: ToolCallRequest,
  bytes: number,
  caller: Caller,
  admitted?: Admitted,
): void {
  const call = deps.engine.start(req, caller, { inputBytes: bytes, door: 'a2e', admitted });
  session.calls.set(
    call,
    forward(session, call, deps.eventRoom).then(
      () => void session.calls.delete(call),
      (err) => {
        session.calls.delete(call);
        deps.logger.error({ err, call_id: call.id }, 'A2E transport could not forward a call');
      },
    ),
  );
}

/**
 * A call's events (seq from 0), then its response, into the outbox. While
 * the stream lags (`eventRoom` frames queued, or the outbox's bytes), events
 * wait inside the call (bounded by its byte budget) and the response in it.
 */
async function forward(session: TransportSession, call: Call, room: number): Promise<void> {
  if (call.request.streaming) {
    const watcher = call.watch();
    try {
      for (let batch = await watcher.next(); batch; batch = await watcher.next()) {
        const events = batch.gap ? [call.gapNotice(batch.gap), ...batch.events] : batch.events;
        for (const ev of events) {
          await roomIn(session, room);
          session.outbox.event(call, JSON.stringify(ev));
        }
      }
    } finally {
      watcher.close();
    }
  }
  const response = await call.result;
  await roomIn(session, Infinity);
  session.outbox.answer(call, JSON.stringify(response));
}

/** Wait while the outbox holds `frames` frames or its byte budget, unless the session is closing (then nothing waits). */
async function roomIn(session: TransportSession, frames: number): Promise<void> {
  while (
    (session.outbox.size >= frames || session.outbox.full) &&
    (session.state === 'open' || session.state === 'draining')
  ) {
    await session.outbox.taken.wait();
  }
}

/** `shutdown`: running calls get `timeoutS` to finish, then the session closes. */
async function drainThenClose(deps: DispatchDeps, session: TransportSession, timeoutS: number): Promise<void> {
  if (session.state !== 'open') return;
  session.state = 'draining';
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(session.calls.values()),
    // Capped: a call cannot outlive server.max_timeout_s anyway, and huge delays overflow setTimeout.
    new Promise((resolve) => (timer = setTimeout(resolve, Math.min(timeoutS, 3600) * 1000))),
  ]);
  clearTimeout(timer);
  await deps.closeSession(session, 'cancel');
}
