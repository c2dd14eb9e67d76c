/**
 * Shared by every bench server process: the echo payloads all servers answer
 * with, the "listening" line the harness waits for, and the IPC memory probe.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** A tool/call/resp for an echo call, shaped exactly like the gateway's. */
export function echoResponse(req, startedAt) {
  const ts = Date.now() / 1000;
  return {
    type: 'tool/call/resp',
    id: randomUUID(),
    version: '1.0',
    ts,
    req_id: req.id ?? randomUUID(),
    data: {
      success: true,
      tool_name: 'echo',
      data: { text: req.arguments?.text },
      summary: null,
      truncated: false,
      exit_code: null,
      error: null,
      error_code: null,
      duration_ms: Math.round(performance.now() - startedAt),
      events: [],
    },
    created_at: ts,
  };
}

/** A successful tool/call/resp of `toolName` with `data`, shaped like the gateway's. */
export function toolResponse(req, toolName, data, startedAt) {
  const resp = echoResponse(req, startedAt);
  resp.data.tool_name = toolName;
  resp.data.data = data;
  return resp;
}

/** One small tool/event, shaped exactly like the gateway's progress events. */
export function progressEvent(reqId, seq) {
  return {
    type: 'tool/event',
    id: randomUUID(),
    version: '1.0',
    ts: Date.now() / 1000,
    kind: 'progress',
    req_id: reqId,
    data: { pct: seq % 100, message: 'tick' },
    seq,
  };
}

/** The event loop's thread's time on the CPU and waiting for it (ns, Linux schedstat), or {} where there is none. */
function mainThreadSched() {
  try {
    const [runNs, waitNs] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8')
      .trim()
      .split(' ')
      .map(Number);
    return { runNs, waitNs };
  } catch {
    return {};
  }
}

/**
 * Announce readiness on stdout and answer the harness's IPC probes:
 * `{cmd: 'mem', gc: true}` → process.memoryUsage() (after a full GC when asked and exposed);
 * `{cmd: 'eld', action: 'start' | 'stop'}` → event-loop delay percentiles in between.
 */
export function ready(url) {
  process.stdout.write(`listening on ${url}\n`);
  let delay;
  let sched;
  process.on('message', (msg) => {
    // Event-loop delay: `{cmd: 'eld', action: 'start'}`, then `'stop'` answers its percentiles (ms).
    if (msg?.cmd === 'eld') {
      if (msg.action === 'start') {
        delay = monitorEventLoopDelay({ resolution: 1 });
        delay.enable();
        sched = { at: performance.now(), ...mainThreadSched() };
        process.send({ id: msg.id });
      } else {
        delay.disable();
        const ms = (ns) => ns / 1e6;
        const now = mainThreadSched();
        const elapsed = performance.now() - sched.at;
        process.send({
          id: msg.id,
          p50: ms(delay.percentile(50)),
          p99: ms(delay.percentile(99)),
          max: ms(delay.max),
          // Shares of the window the event loop's thread ran, and was ready to run but waited for the CPU.
          ...(now.runNs !== undefined &&
            sched.runNs !== undefined && {
              runShare: ms(now.runNs - sched.runNs) / elapsed,
              waitShare: ms(now.waitNs - sched.waitNs) / elapsed,
            }),
        });
      }
    }
    if (msg?.cmd === 'mem') {
      if (msg.gc && typeof globalThis.gc === 'function') {
        globalThis.gc();
        globalThis.gc();
      }
      process.send({ id: msg.id, mem: process.memoryUsage() });
    }
  });
  // Exit when the harness goes away, whatever happened to it.
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}

export function addressOf(server) {
  const a = server.address();
  return `http://127.0.0.1:${a.port}`;
}
