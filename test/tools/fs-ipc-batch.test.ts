/**
 * The file tools worker's IPC batching (src/tools/fs/worker/ipc-batch.ts): what one
 * event-loop turn sends goes as one message, in order; a lone message goes as
 * itself; the next turn starts a new batch; eachMessage unpacks either.
 */
import { describe, expect, it } from 'vitest';
import { batchedSender, eachMessage, type Batch } from '../../src/tools/fs/worker/ipc-batch.js';

type M = { type: 'call'; id: number };
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('batchedSender', () => {
  it("sends a turn's messages as one batch, in order, a lone message as itself, and nothing before the turn ends", async () => {
    const sent: (M | Batch<M>)[] = [];
    const post = batchedSender<M>((m) => sent.push(m));
    post({ type: 'call', id: 1 });
    post({ type: 'call', id: 2 });
    await Promise.resolve();
    post({ type: 'call', id: 3 }); // a microtask later: still this turn
    expect(sent).toEqual([]);
    await nextTurn();
    expect(sent).toEqual([{ type: 'batch', messages: [1, 2, 3].map((id) => ({ type: 'call', id })) }]);
    post({ type: 'call', id: 4 });
    await nextTurn();
    expect(sent[1]).toEqual({ type: 'call', id: 4 });
    expect(sent).toHaveLength(2);
  });

  it('eachMessage hands out a batch message by message, and a lone message once', () => {
    const seen: number[] = [];
    eachMessage<M>(
      {
        type: 'batch',
        messages: [
          { type: 'call', id: 1 },
          { type: 'call', id: 2 },
        ],
      },
      (m) => seen.push(m.id),
    );
    eachMessage<M>({ type: 'call', id: 3 }, (m) => seen.push(m.id));
    expect(seen).toEqual([1, 2, 3]);
  });
});
