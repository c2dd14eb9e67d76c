/** What a file tool call is given besides the workspace: the call's context and the limits of tools.fs. */
import type { ToolContext } from '../../engine/index.js';
import type { FsConfig } from './config.js';

/**
 * What the file tools use of a call's context. `eventsTaken` is awaited after each progress event of a long
 * grep walk, so a reader that falls behind pauses the walk instead of losing its events.
 */
export type FsContext = Pick<ToolContext, 'signal' | 'emit' | 'eventsTaken'>;

/** Whether the call was stopped: all a file tool's cancellation checks read (an AbortSignal is one). */
export interface Stopped {
  readonly aborted: boolean;
}

/**
 * The call's stop state, read from its signal only when a check asks: the engine makes a call's
 * AbortController on first use of `ctx.signal`, and most file tool calls (a small read, one directory)
 * finish before any check, so they never make one (nor have it aborted when the call settles).
 */
export function stoppedOf(ctx: Pick<FsContext, 'signal'>): Stopped {
  return new StoppedOf(ctx);
}

/**
 * A class, not an object literal with a getter: V8 gives every such literal a hidden class of its own (its
 * getter is a new function each time), made in the old generation, which kept each call's objects alive
 * past the young generation until a full collection.
 */
class StoppedOf implements Stopped {
  constructor(private readonly ctx: Pick<FsContext, 'signal'>) {}

  get aborted(): boolean {
    return this.ctx.signal.aborted;
  }
}

/** The limits of tools.fs a file tool call needs. */
export type FsLimits = Pick<FsConfig, 'max_read_bytes' | 'max_write_bytes'>;
