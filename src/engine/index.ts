export * from './errors.js';
export * from './plugin.js';
export * from './policy.js';
export * from './audit.js';
export * from './arguments.js';
export * from './registry.js';
export * from './call.js';
export * from './engine.js';
export { ToolSearchIndex, tokenize } from './search.js';
