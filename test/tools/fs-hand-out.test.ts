/**
 * Answers of the file tools' helper threads and privilege-separated worker
 * resume their calls a few per event-loop turn (src/tools/fs/threads/hand-out.ts), so
 * that a burst of them is not one long task that a health check waits behind.
 */
import { describe, expect, it } from 'vitest';
import { handOut } from '../../src/tools/fs/threads/hand-out.js';

describe('handOut', () => {
  it('resumes every answer, in order, at most 8 per event-loop turn', async () => {
    const ran: { i: number; turn: number }[] = [];
    let turn = 0;
    const done = new Promise<void>((resolve) => {
      for (let i = 0; i < 30; i++) handOut(() => ran.push({ i, turn }) === 30 && resolve());
    });
    // One step per check phase (queued after the hand-out's own, it runs after each slice): the turns of the loop,
    // each of which polls for I/O first.
    const count = () => {
      turn++;
      if (ran.length < 30) setImmediate(count);
    };
    setImmediate(count);
    await done;
    expect(ran.map((r) => r.i)).toEqual([...Array(30).keys()]);
    const perTurn = new Map<number, number>();
    for (const r of ran) perTurn.set(r.turn, (perTurn.get(r.turn) ?? 0) + 1);
    expect([...perTurn.values()]).toEqual([8, 8, 8, 6]);
  });

  it('an answer handed out while a slice runs goes to a later turn, after the I/O of the one between', async () => {
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      handOut(() => {
        order.push('first');
        // Queued now, before the hand-out schedules its next slice: runs in between if that slice is a later turn.
        setImmediate(() => order.push('next turn'));
        handOut(() => {
          order.push('later');
          resolve();
        });
      });
    });
    // Run at once, or in the same slice, 'later' would come before 'next turn'.
    expect(order).toEqual(['first', 'next turn', 'later']);
  });
});
