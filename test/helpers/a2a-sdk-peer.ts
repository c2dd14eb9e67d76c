/**
 * A real A2A peer built with the official A2A JavaScript SDK
 * (@a2a-js/sdk server classes + its Express adapter), on an ephemeral
 * 127.0.0.1 port. `mode: 'strict'` is a pure A2A 1.0 server; `mode: 'compat'`
 * enables the SDK's v0.3 compatibility layer and advertises a v0.3 JSON-RPC
 * interface, so clients speak 0.3 to it.
 *
 * Skills (chosen by message.metadata.skillId):
 *   complete — works briefly, then one artifact "done: <task>" and completed
 *   fail     — failed, with the status message "diff would not apply"
 *   answer   — answers with a direct message, no task
 *   stream   — three appended artifact chunks and two status updates, then completed
 *   hang     — works until canceled; the cancel is recorded
 *   flood    — only with `options.flood`: that many artifact updates as fast as it can, then completed
 */
import type { AddressInfo } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import express from 'express';
import { Role, TaskState, type AgentCard, type Message, type Part } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

export interface SdkPeer {
  url: string;
  cardUrl: string;
  /** JSON-RPC methods received, in order, with the A2A-Version header each carried. */
  calls: { method: string; version: string | undefined }[];
  /** The W3C `traceparent` header of each JSON-RPC request (parallel to `calls`). */
  traceparents: (string | undefined)[];
  /** Task ids the executor was asked to cancel. */
  canceled: string[];
  /** TCP connections the peer has accepted so far. */
  connections(): number;
  /** The HTTP responses of its JSON-RPC requests, in order (to see how far a streamed answer got). */
  responses: ServerResponse[];
  /** Artifact chunks the flood skill has published so far. */
  flooded(): number;
  close(): Promise<void>;
}

export interface SdkPeerOptions {
  /** Offer the "flood" skill, publishing this many artifact updates "<i> <floodChunk>" (default 1 KB of "x"). */
  flood?: number;
  floodChunk?: string;
}

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

export async function startSdkPeer(
  mode: 'strict' | 'compat',
  name = 'SDK Agent',
  options: SdkPeerOptions = {},
): Promise<SdkPeer> {
  const responses: ServerResponse[] = [];
  let flooded = 0;
  const calls: SdkPeer['calls'] = [];
  const traceparents: SdkPeer['traceparents'] = [];
  const canceled: string[] = [];
  const cancelRequests = new Map<string, () => void>();

  const app = express();
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let connections = 0;
  server.on('connection', () => connections++);

  const card: AgentCard = {
    name,
    description: 'A peer built with @a2a-js/sdk for the gateway tests',
    version: '2.0.0',
    supportedInterfaces: [
      {
        url: `${base}/a2a/jsonrpc`,
        protocolBinding: 'JSONRPC',
        protocolVersion: mode === 'strict' ? '1.0' : '0.3',
        tenant: '',
      },
    ],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: ['complete', 'fail', 'answer', 'stream', 'hang', ...(options.flood ? ['flood'] : [])].map((id) => ({
      id,
      name: id,
      description: `The "${id}" skill of the SDK test peer`,
      tags: ['sdk', id],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    })),
    signatures: [],
  };

  const executor: AgentExecutor = {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const msg = ctx.userMessage;
      const task = msg.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      const skill = String(msg.metadata?.skillId ?? 'complete');
      const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
      const status = (state: TaskState, message?: string) =>
        AgentEvent.statusUpdate({
          ...ids,
          status: {
            state,
            timestamp: new Date().toISOString(),
            message: message === undefined ? undefined : agentMessage(ids, message),
          },
          metadata: undefined,
        });
      if (skill === 'answer') {
        bus.publish(AgentEvent.message(agentMessage({ taskId: '', contextId: ctx.contextId }, `answer: ${task}`)));
        bus.finished();
        return;
      }
      bus.publish(
        AgentEvent.task({
          id: ctx.taskId,
          contextId: ctx.contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
          artifacts: [],
          history: [msg],
          metadata: undefined,
        }),
      );
      bus.publish(status(TaskState.TASK_STATE_WORKING, 'on it'));
      if (skill === 'fail') {
        await delay(30);
        bus.publish(status(TaskState.TASK_STATE_FAILED, 'diff would not apply'));
      } else if (skill === 'stream') {
        for (const [i, chunk] of ['alpha ', 'beta ', 'gamma'].entries()) {
          await delay(20);
          bus.publish(
            AgentEvent.artifactUpdate({
              ...ids,
              artifact: {
                artifactId: 'story',
                name: 'story.txt',
                description: '',
                parts: [text(chunk)],
                metadata: undefined,
                extensions: [],
              },
              append: i > 0,
              lastChunk: i === 2,
              metadata: undefined,
            }),
          );
          if (i === 1) bus.publish(status(TaskState.TASK_STATE_WORKING, 'halfway'));
        }
        bus.publish(status(TaskState.TASK_STATE_COMPLETED));
      } else if (skill === 'flood') {
        const chunk = options.floodChunk ?? 'x'.repeat(1024);
        for (let i = 0; i < (options.flood ?? 0); i++) {
          bus.publish(
            AgentEvent.artifactUpdate({
              ...ids,
              artifact: {
                artifactId: 'flood',
                name: 'flood.txt',
                description: '',
                parts: [text(`${i} ${chunk}`)],
                metadata: undefined,
                extensions: [],
              },
              append: false, // each chunk replaces the last: the SDK's task store copies the whole task per update
              lastChunk: false,
              metadata: undefined,
            }),
          );
          flooded++;
        }
        bus.publish(status(TaskState.TASK_STATE_COMPLETED));
      } else if (skill === 'hang') {
        await new Promise<void>((resolve) => cancelRequests.set(ctx.taskId, resolve));
        bus.publish(status(TaskState.TASK_STATE_CANCELED, 'canceled at the caller’s request'));
      } else {
        await delay(50);
        bus.publish(
          AgentEvent.artifactUpdate({
            ...ids,
            artifact: {
              artifactId: 'result',
              name: 'result',
              description: '',
              parts: [text(`done: ${task}`)],
              metadata: undefined,
              extensions: [],
            },
            append: false,
            lastChunk: true,
            metadata: undefined,
          }),
        );
        bus.publish(status(TaskState.TASK_STATE_COMPLETED));
      }
      bus.finished();
    },
    async cancelTask(taskId: string) {
      canceled.push(taskId);
      cancelRequests.get(taskId)?.();
    },
  };

  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const legacyCompat = { enabled: mode === 'compat' };
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler, legacyCompat }));
  app.use(
    '/a2a/jsonrpc',
    express.json(),
    (req, res, next) => {
      responses.push(res);
      calls.push({ method: String(req.body?.method), version: req.header('a2a-version') });
      traceparents.push(req.header('traceparent'));
      next();
    },
    jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }),
  );

  return {
    url: base,
    cardUrl: `${base}/.well-known/agent-card.json`,
    calls,
    traceparents,
    canceled,
    connections: () => connections,
    responses,
    flooded: () => flooded,
    close: () =>
      new Promise<void>((resolve) => {
        for (const release of cancelRequests.values()) release();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function agentMessage(ids: { taskId: string; contextId: string }, value: string): Message {
  return {
    messageId: crypto.randomUUID(),
    ...ids,
    role: Role.ROLE_AGENT,
    parts: [text(value)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
