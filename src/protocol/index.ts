export * from './base.js';
export * from './tools.js';
export * from './error.js';
export * from './issues.js';
export * from './handshake.js';
export * from './agents.js';
export * from './lifecycle.js';
export * from './parse.js';
export { fastToolCallRequest } from './fast-call-request.js';
