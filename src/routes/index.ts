export { createApp, openApiDocument, type AppOptions } from './app.js';
export { DEFAULT_HTTP_LIMITS, type HttpLimits } from './http/limits.js';
export { streamSse, sseFrame, SSE_HEADERS, type SseSink } from './http/sse.js';
export { errorMessage, errorResponse, STATUS_BY_CODE } from './http/errors.js';
