/**
 * What a door may take of a call that just settled, its data's JSON (`Call.responseJson`, `takeDataJson`: the text
 * measuring it against the output cap made), is kept until the event-loop turn the call settled in ends: a door
 * answering the call does so in that turn (it awaits `call.result`, then answers). Then a call that is kept (a call
 * resource) holds only its response. So a door asks for it once the call has settled and says nothing beforehand.
 */
import type { Call } from './call.js';

export class SettledTurn {
  private calls: Call[] = [];

  /** `call` just settled: keep its data's JSON until this turn ends. */
  add(call: Call): void {
    // One immediate per turn, whatever number of calls settle in it.
    if (this.calls.push(call) === 1) setImmediate(this.end);
  }

  private readonly end = (): void => {
    const calls = this.calls;
    this.calls = [];
    for (const call of calls) call.turnEnded();
  };
}
