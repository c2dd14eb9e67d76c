/**
 * A local A2A peer built with the official @a2a-js/sdk server (Express
 * adapter), for scenario 4. Skills (message.metadata.skillId):
 *   instant — one artifact and `completed` at once
 *   slow    — `working`, then after 300 ms one artifact and `completed`
 * Counts the TCP connections it accepts; IPC `{cmd: 'connections'}` answers the count.
 */
import express from 'express';
import { TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

const text = (value) => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});
const app = express();
let connections = 0;
const server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
server.on('connection', () => connections++);
const base = `http://127.0.0.1:${server.address().port}`;

const card = {
  name: 'Bench Peer',
  description: 'A2A peer for the gateway benchmarks',
  version: '1.0.0',
  supportedInterfaces: [{ url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
  provider: undefined,
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: ['instant', 'slow'].map((id) => ({
    id,
    name: id,
    description: `The "${id}" skill of the bench peer`,
    tags: ['bench'],
    examples: [],
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  })),
  signatures: [],
};

const executor = {
  async execute(ctx, bus) {
    const msg = ctx.userMessage;
    const task = msg.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    const ids = { taskId: ctx.taskId, contextId: ctx.contextId };
    const status = (state) =>
      AgentEvent.statusUpdate({
        ...ids,
        status: { state, timestamp: new Date().toISOString(), message: undefined },
        metadata: undefined,
      });
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
    if (msg.metadata?.skillId === 'slow') {
      bus.publish(status(TaskState.TASK_STATE_WORKING));
      await new Promise((r) => setTimeout(r, 300));
    }
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
    bus.finished();
  },
  async cancelTask() {},
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use(
  '/a2a/jsonrpc',
  express.json(),
  jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
);

process.stdout.write(`listening on ${base}\n`);
process.on('message', (m) => {
  if (m?.cmd === 'connections') process.send({ id: m.id, connections });
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
