/** Public API of a2e-gateway. */
export * from './protocol/index.js';
export * from './engine/index.js';
export * from './config/index.js';
export { createGateway, builtinPlugins, openApiFor, VERSION, type Gateway, type GatewayOptions } from './server.js';
export { createLogger, type LogLevel } from './logger.js';
export { createApp, openApiDocument } from './routes/index.js';
export * from './a2a/index.js';
export {
  bearerToken,
  buildPolicy,
  compileRules,
  createAuthenticator,
  resolveCaller,
  type AccessRules,
  type Authenticate,
  type Principal,
  type Security,
} from './security/index.js';
