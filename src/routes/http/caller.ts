/**
 * Who is calling, for the routes that start calls: a caller the session and
 * token rules refuse is an audited call attempt, like the ones the engine refuses.
 */
import type { Context } from 'hono';
import { GatewayError, type Call, type Caller, type Engine, type StartOptions } from '../../engine/index.js';
import type { AdmittedCaller } from '../../security/access.js';
import type { ToolCallRequest } from '../../protocol/index.js';

export function callerOfCall(
  c: Context,
  req: ToolCallRequest,
  inputBytes: number,
  deps: { engine: Engine; caller: (c: Context, sessionId: string) => Caller | Promise<Caller> },
): Caller | Promise<Caller>;
export function callerOfCall(
  c: Context,
  req: ToolCallRequest,
  inputBytes: number,
  deps: { engine: Engine; caller: (c: Context, sessionId: string) => Caller | Promise<AdmittedCaller> },
): Caller | Promise<AdmittedCaller>;
export function callerOfCall(
  c: Context,
  req: ToolCallRequest,
  inputBytes: number,
  deps: { engine: Engine; caller: (c: Context, sessionId: string) => Caller | Promise<Caller | AdmittedCaller> },
): Caller | Promise<Caller | AdmittedCaller> {
  return lookUpCaller(c, req, inputBytes, deps.engine, deps.caller);
}

function lookUpCaller<T extends Caller | AdmittedCaller>(
  c: Context,
  req: ToolCallRequest,
  inputBytes: number,
  engine: Engine,
  lookUp: (c: Context, sessionId: string) => Caller | Promise<T>,
): Caller | Promise<T> {
  try {
    const caller = lookUp(c, req.session_id);
    // The refusal's handler is made only for a caller that is looked up asynchronously (not per call).
    return caller instanceof Promise
      ? caller.catch((err: unknown) => refusedCall(c, req, inputBytes, engine, err))
      : caller;
  } catch (err) {
    return refusedCall(c, req, inputBytes, engine, err);
  }
}

/** Audit a call attempt refused for its caller (a GatewayError), then rethrow. */
function refusedCall(c: Context, req: ToolCallRequest, inputBytes: number, engine: Engine, err: unknown): never {
  if (err instanceof GatewayError) {
    engine.recordRefused({
      tool_name: req.tool_name,
      req_id: req.id,
      correlation_id: req.correlation_id,
      session_id: req.session_id,
      principal: c.get('principal')?.name ?? null,
      error_code: err.code,
      input_bytes: inputBytes,
    });
  }
  throw err;
}

/**
 * Start `req` for the request's caller: at once, or after the shared
 * admission (store.kind redis) when the call needs one (see admitCaller).
 * `options` must be this call's own object: the admission's outcome is set on it.
 */
export function startCall(
  c: Context,
  req: ToolCallRequest,
  inputBytes: number,
  deps: { engine: Engine; admit: (c: Context, sessionId: string) => Caller | Promise<AdmittedCaller> },
  options: StartOptions,
): Call | Promise<Call> {
  const who = lookUpCaller(c, req, inputBytes, deps.engine, deps.admit);
  if (!(who instanceof Promise)) return deps.engine.start(req, who, options);
  return who.then(({ caller, admitted }) => {
    options.admitted = admitted;
    return deps.engine.start(req, caller, options);
  });
}
