/**
 * The SDK's own A2A server (@a2a-js/sdk, Express adapter, JSON-RPC, A2A 1.0)
 * with an executor equivalent to the gateway's echo skill: the data part's
 * `text` comes back as a `result` artifact (a data part and a text part) and
 * the task is `completed` — for scenario 7's comparison with the gateway's
 * own A2A endpoint.
 */
import express from 'express';
import { TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { ready } from './common.mjs';

const app = express();
const server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const base = `http://127.0.0.1:${server.address().port}`;

const card = {
  name: 'SDK echo',
  description: 'The SDK server with an echo executor',
  version: '1.0.0',
  supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
  provider: undefined,
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['application/json'],
  defaultOutputModes: ['application/json'],
  skills: [
    {
      id: 'echo',
      name: 'echo',
      description: 'Echo',
      tags: ['bench'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  signatures: [],
};

const part = (content, mediaType) => ({ content, metadata: undefined, filename: '', mediaType });
const executor = {
  async execute(ctx, bus) {
    const msg = ctx.userMessage;
    const data = msg.parts.find((p) => p.content?.$case === 'data')?.content.value ?? {};
    const result = { text: data.text };
    const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    bus.publish(
      AgentEvent.task({
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
        artifacts: [],
        history: [],
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        ...ids,
        artifact: {
          artifactId: 'result',
          name: 'result',
          description: '',
          parts: [
            part({ $case: 'data', value: result }, 'application/json'),
            part({ $case: 'text', value: JSON.stringify(result) }, ''),
          ],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        ...ids,
        status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: new Date().toISOString(), message: undefined },
        metadata: undefined,
      }),
    );
    bus.finished();
  },
  async cancelTask() {},
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
app.use('/a2a', express.json(), jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
ready(base);
