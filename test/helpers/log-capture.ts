/** A logger whose JSON lines the test reads back: what the gateway logged, as text or as records. */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from '../../src/index.js';

export class LogCapture {
  lines: string[] = [];
  readonly logger: Logger;
  constructor(level = 'debug') {
    const stream = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        this.lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    this.logger = pino({ level, base: undefined }, stream) as unknown as Logger;
  }
  get text(): string {
    return this.lines.join('\n');
  }
  /** Every line parsed. */
  get records(): (Record<string, any> & { msg: string })[] {
    return this.lines.map((l) => JSON.parse(l));
  }
}
