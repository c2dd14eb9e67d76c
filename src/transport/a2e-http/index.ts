export {
  A2eHttpTransport,
  ANONYMOUS,
  DEFAULT_MEMORY,
  dispatchDeps,
  TransportRefusal,
  type A2eHttpTransportOptions,
  type RefusalKind,
  type TransportMemoryLimits,
} from './transport.js';
export { TransportConfig } from './config.js';
export { acceptAnyToken, bearerTokenAuth, type HandshakeAuth, type HandshakeAuthResult } from './auth.js';
export type { FrameSink } from './session.js';
export { Inbox } from './inbox.js';
export type { A2eTransport, A2eTransportFactory } from './seam.js';
export { SessionBinding, type Presenter, type SavedBinding } from './binding.js';
export { dispatch, type DispatchDeps } from './dispatch.js';
export type { DispatchSession, SessionState } from './session.js';
export type { SessionOutbox } from './outbox.js';
