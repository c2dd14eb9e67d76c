/** A streaming `POST /tool/call` whose SSE answer is not read until the test says so: a reader that falls behind. */
import http, { type ServerResponse } from 'node:http';
import { createParser } from 'eventsource-parser';
import { waitFor } from '../tools/procs.js';
import { callBody } from './server.js';

export interface Frame {
  event: string | undefined;
  id: string | undefined;
  json: any;
}

export interface PausedCall {
  /** The request (destroy it to disconnect). */
  req: http.ClientRequest;
  /** Start reading: resolves with every frame of the rest of the stream. */
  read(): Promise<Frame[]>;
}

/** Start a streaming call of `tool` and read nothing of its answer (its status line and headers excepted). */
export async function pausedCall(
  url: string,
  tool: string,
  args: Record<string, unknown>,
  timeoutS = 120,
): Promise<PausedCall> {
  const body = JSON.stringify(callBody(tool, args, { streaming: true, timeout: timeoutS }));
  const req = http.request(`${url}/tool/call`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'content-length': Buffer.byteLength(body),
    },
  });
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    req.on('response', resolve).on('error', reject);
    req.end(body);
  });
  if (res.statusCode !== 200) throw new Error(`POST /tool/call answered HTTP ${res.statusCode}`);
  res.pause();
  return {
    req,
    read(): Promise<Frame[]> {
      const frames: Frame[] = [];
      const parser = createParser({
        onEvent: (e) => frames.push({ event: e.event, id: e.id, json: JSON.parse(e.data) }),
      });
      return new Promise((resolve, reject) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('end', () => resolve(frames));
        res.on('error', reject);
        res.resume();
      });
    },
  };
}

/** The gap notices among the frames (status events saying events were dropped before they could be read). */
export function gapNotices(frames: Frame[]): Frame[] {
  return frames.filter(
    (f) => f.event === 'tool/event' && f.json.kind === 'status' && /no longer kept/.test(f.json.data.message),
  );
}

/**
 * Whether a peer's streamed `answer` got out completely, or sat unfinished, getting nothing more out, over 4 looks
 * 25 ms apart (a gateway that reads drains it far sooner): 'held' is what a gateway that stopped reading causes.
 */
export function heldOrFinished(answer: ServerResponse, what: string): Promise<'held' | 'finished'> {
  let last = '';
  let looks = 0;
  return waitFor(
    `${what} to be held or finish`,
    () => {
      if (answer.writableFinished) return 'finished' as const;
      const now = `${answer.socket?.bytesWritten}/${answer.socket?.writableLength}/${answer.writableLength}`;
      looks = now === last ? looks + 1 : 1;
      last = now;
      return looks >= 4 ? ('held' as const) : undefined;
    },
    30_000,
  );
}
