export { A2AServerConfig } from './config.js';
export { A2AHandler, type A2AHandlerDeps, type RpcContext, type RpcOutcome, type RpcStream } from './handler.js';
export { agentCard, type CardOptions } from './card.js';
export { RPC, RpcError, asRpcError, parseRpcRequest, rpcError, rpcResult, type RpcId, type RpcRequest } from './jsonrpc.js';
