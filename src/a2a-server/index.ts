export { A2AServerConfig } from './config.js';
export { A2AHandler, type A2AHandlerDeps, type RpcContext, type RpcOutcome, type RpcStream } from './handler.js';
export { agentCard, type CardOptions } from './card.js';
export { RPC, asRpcError, parseRpcRequest, type RpcRequest } from './jsonrpc.js';
export { RpcError, rpcError, rpcResult, type RpcId } from '../wire/jsonrpc.js';
