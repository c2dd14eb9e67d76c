/**
 * The limits every HTTP door reads requests and writes streams with. Built
 * once from the config (server.ts) and handed whole to each group of routes,
 * so a door cannot miss one by being passed fields one at a time.
 */
import { DEFAULT_MAX_JSON_DEPTH, type MessageLimits } from '../../engine/message-reader.js';
import { DEFAULT_STREAM_LIMITS, type StreamLimits } from './sse.js';

export interface HttpLimits extends MessageLimits {
  /** `server.body_limit_bytes`: the largest request body read. */
  bodyLimitBytes: number;
  /** `server.heartbeat_s`: seconds between SSE keep-alive comments. */
  heartbeatS: number;
  /** `limits.stream_unsent_bytes`, `limits.stream_stall_s`: what a stream holds for a client that does not keep up. */
  streams: StreamLimits;
}

/** The config's defaults, for an app built without a config (embedding, the OpenAPI document). */
export const DEFAULT_HTTP_LIMITS: HttpLimits = Object.freeze({
  bodyLimitBytes: 1024 * 1024,
  maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
  heartbeatS: 15,
  streams: DEFAULT_STREAM_LIMITS,
});
