/**
 * What counts as an acceptable error in the chaos run: one a client can act
 * on. It must be retryable (the gateway's `retryable: true`, or an HTTP status
 * that means "try again": 502/503/504 from the proxy whose instance died
 * mid-request) and say what happened (a message, not an empty body). A failed
 * tool response is acceptable only when it says the instance running the call
 * was lost, or that the store was unavailable; anything else (a call canceled
 * by nobody, a 404 for a call the client was just given, an internal error) is
 * not, and fails the run.
 */

export interface Classified {
  kind: string;
  text: string;
  acceptable: boolean;
}

/** An HTTP answer that was not the success the client asked for. */
export function httpError(status: number, body: string): Classified {
  const json = parse(body);
  if (json && typeof json.code === 'string' && typeof json.message === 'string') {
    // The gateway's A2E error message.
    return {
      kind: `HTTP ${status} ${json.code}`,
      text: json.message,
      acceptable: json.retryable === true && json.message.trim() !== '',
    };
  }
  if (json && typeof json.detail === 'string') {
    // The A2E transport's refusals ({"detail": "…"}): retryable by status.
    return {
      kind: `HTTP ${status} (transport)`,
      text: json.detail,
      acceptable: retryableStatus(status) && json.detail.trim() !== '',
    };
  }
  const title = /<title>([^<]*)<\/title>/i.exec(body)?.[1]?.trim();
  if (title && retryableStatus(status)) {
    // nginx's own page: the instance it proxied to died mid-request (502) or none answered (504).
    return { kind: `HTTP ${status} (nginx)`, text: `nginx: ${title}`, acceptable: true };
  }
  return { kind: `HTTP ${status}`, text: body.slice(0, 240) || '(empty body)', acceptable: false };
}

/** An A2E `error` message (a transport frame or an SSE `tool/error`). */
export function a2eError(message: { code?: unknown; message?: unknown; retryable?: unknown }): Classified {
  const text = typeof message.message === 'string' ? message.message : JSON.stringify(message).slice(0, 240);
  return { kind: `error ${String(message.code)}`, text, acceptable: message.retryable === true && text.trim() !== '' };
}

/**
 * A final tool response with `success: false`. `instanceDied`: whether the instance running the call was killed
 * (Ledger.instanceDied); when it was not, "the instance running it was lost" is not what happened, and is not acceptable.
 */
export function toolFailure(data: { error?: unknown; error_code?: unknown }, instanceDied: boolean): Classified {
  const text = typeof data.error === 'string' ? data.error : '(no error text)';
  const instanceLost = data.error_code === 'tool_error' && /instance running .* was lost/.test(text);
  const storeDown = data.error_code === 'unavailable';
  if (instanceLost && !instanceDied)
    return { kind: 'tool tool_error (instance lost, but it was not killed)', text, acceptable: false };
  return {
    kind: `tool ${String(data.error_code)}${instanceLost ? ' (instance lost)' : ''}`,
    text,
    acceptable: instanceLost || storeDown,
  };
}

/** A request that got no HTTP answer at all (the proxy in front never dies, so this is not expected). */
export function noAnswer(err: unknown): Classified {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  const text = [e.name, e.message, e.cause?.code ?? e.cause?.message].filter(Boolean).join(': ');
  return { kind: 'no HTTP answer', text, acceptable: false };
}

function retryableStatus(status: number): boolean {
  return status === 502 || status === 503 || status === 504 || status === 429;
}

function parse(body: string): any {
  try {
    const v = JSON.parse(body);
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}
