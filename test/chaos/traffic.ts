/** What every traffic loop of a chaos run shares. */
import type { Ledger } from './ledger.js';

export interface Traffic {
  /** nginx, e.g. http://127.0.0.1:PORT */
  url: string;
  ledger: Ledger;
  /** No new call after this (Date.now() scale); calls already started are followed to their end. */
  untilMs: number;
  /**
   * How long a call may go without an answer before it is counted lost: the owner's lease lapsing, the sweep
   * that fails its calls, and a Redis restart's worth of slack.
   */
  answerWithinMs: number;
  random: () => number;
  /** A time as the faults' timeline writes it: "+12.3 s" after the run started. */
  at(ms: number): string;
}

/**
 * The tool every door runs: `ticker` emits `count` events ("tick N" at seq N, with the pid of the instance
 * running it), one every `every_ms`, so kills land mid-call.
 */
export const ticker = (count: number, everyMs: number) => ({
  tool_name: 'ticker',
  arguments: { count, every_ms: everyMs, pid_in_events: true },
});

/** The pid of the instance that ran a ticker event, if it says. */
export function pidOf(ev: { data?: { pid?: unknown } }): number | undefined {
  return typeof ev.data?.pid === 'number' ? ev.data.pid : undefined;
}

/** Whether a `tool/event` is the ticker's own event for its seq (the gap notice is a `status` event). */
export function isTick(ev: { kind?: string; seq?: number; data?: { message?: unknown } }): boolean {
  return ev.kind === 'progress' && ev.data?.message === `tick ${ev.seq}`;
}

/** A gap notice's range ("events A..B of this call are no longer kept"), or undefined. */
export function gapOf(ev: { kind?: string; data?: { message?: unknown } }): { from: number; to: number } | undefined {
  if (ev.kind !== 'status' || typeof ev.data?.message !== 'string') return undefined;
  const m = /^events (\d+)\.\.(\d+) of this call are no longer kept/.exec(ev.data.message);
  return m ? { from: Number(m[1]), to: Number(m[2]) } : undefined;
}
