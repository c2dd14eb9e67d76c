/**
 * Who is calling, for the routes that start calls: a caller the session and
 * token rules refuse is an audited call attempt, like the ones the engine refuses.
 */
import type { Context } from 'hono';
import { GatewayError, type Caller, type Engine } from '../../engine/index.js';
import type { ToolCallRequest } from '../../protocol/index.js';

export function callerOfCall(
  c: Context,
  req: ToolCallRequest,
  inputBytes: number,
  deps: { engine: Engine; caller: (c: Context, sessionId: string) => Caller },
): Caller {
  try {
    return deps.caller(c, req.session_id);
  } catch (err) {
    if (err instanceof GatewayError) {
      deps.engine.recordRefused({
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
}
