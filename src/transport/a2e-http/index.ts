export {
  A2eHttpTransport,
  TransportRefusal,
  type A2eHttpTransportOptions,
  type RefusalKind,
  type TransportMemoryLimits,
} from './transport.js';
export { TransportConfig } from './config.js';
export { acceptAnyToken, bearerTokenAuth, type HandshakeAuth, type HandshakeAuthResult } from './auth.js';
export type { FrameSink } from './session.js';
