/**
 * Processes of a bench run: servers pinned to one CPU, load generators to the
 * other (when `taskset` exists), all on 127.0.0.1. Every process started here
 * is stopped by `stopAll()`.
 */
import { spawn, execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function hasTaskset() {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** CPU pinning: server on CPU 0, load on CPU 1 (when there are two CPUs and taskset). */
export const pinning = (() => {
  const cpus = availableParallelism();
  if (!hasTaskset() || cpus < 2) return { enabled: false, server: null, load: null, cpus };
  return { enabled: true, server: '0', load: '1', cpus };
})();

function command(cpu, nodeArgs) {
  return cpu === null ? ['node', nodeArgs] : ['taskset', ['-c', cpu, 'node', ...nodeArgs]];
}

/** Shown in BENCHMARKS.md: how a process was started. */
export function shownCommand(role, nodeArgs) {
  const cpu = role === 'server' ? pinning.server : pinning.load;
  const [cmd, args] = command(cpu, nodeArgs);
  return [cmd, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a}'`)).join(' ');
}

const running = new Set();

/**
 * Start a server process (`node [flags] script`) on the server CPU and wait
 * for its `listening on URL` line. Returns its URL, pid, a memory probe and stop().
 * `onStdoutLine` sees each line the server prints after that one (e.g. V8's `--trace-gc-nvp`).
 */
export function startServer(
  nodeArgs,
  {
    env = {},
    readyPattern = /listening on (http:\/\/\S+)/,
    ipc = true,
    timeoutMs = 30_000,
    stderrFile,
    onStdoutLine,
  } = {},
) {
  const [cmd, args] = command(pinning.server, nodeArgs);
  // `stderrFile`: the server's stderr (its log) goes to that file, as an operator would redirect it.
  const stderrFd = stderrFile ? openSync(stderrFile, 'a') : undefined;
  const startedAt = performance.now();
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', stderrFd ?? 'pipe', ...(ipc ? ['ipc'] : [])],
  });
  if (stderrFd !== undefined) closeSync(stderrFd);
  running.add(child);
  child.once('exit', () => running.delete(child));
  let stderr = stderrFile ? `(stderr in ${stderrFile})` : '';
  child.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => fail(new Error(`server ${nodeArgs.join(' ')} did not print its listening line in ${timeoutMs} ms`)),
      timeoutMs,
    );
    const fail = (err) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.once('exit', (code) =>
      fail(new Error(`server ${nodeArgs.join(' ')} exited with ${code} before listening: ${stderr}`)),
    );
    child.stdout.on('data', (d) => {
      out += d;
      const m = readyPattern.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.once('exit', () => running.delete(child));
      child.stdout.removeAllListeners('data');
      if (onStdoutLine) {
        let rest = out.slice(m.index + m[0].length);
        child.stdout.on('data', (d) => {
          const lines = (rest + d).split('\n');
          rest = lines.pop();
          for (const line of lines) onStdoutLine(line);
        });
      }
      child.stdout.resume();
      resolve(serverHandle(child, m[1], performance.now() - startedAt));
    });
  });
}

function serverHandle(child, url, startMs) {
  let nextId = 0;
  return {
    url,
    pid: child.pid,
    startMs,
    /** Send an IPC request `{cmd, …}` and resolve with the server's reply (matched by id). */
    ask(request) {
      const id = ++nextId;
      return new Promise((resolve, reject) => {
        const onMsg = (m) => {
          if (m?.id !== id) return;
          child.off('message', onMsg);
          resolve(m);
        };
        child.on('message', onMsg);
        child.send({ ...request, id }, (err) => err && reject(err));
      });
    },
    /** process.memoryUsage() of the server, after a full GC when `gc` (needs --expose-gc). */
    async mem(gc = false) {
      return (await this.ask({ cmd: 'mem', gc })).mem;
    },
    /** Resident set size from /proc (no cooperation from the process needed). */
    rssFromProc() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
    },
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      });
    },
  };
}

/**
 * Run a load-generator script on the load CPU with a JSON spec; resolves with
 * its last output line as JSON. `onLine` sees every line as it comes;
 * `cpu: 'server'` runs it on the server's CPU instead (work compared with a server's own).
 */
export function runLoad(script, spec, { timeoutMs = 600_000, onLine, cpu = 'load' } = {}) {
  const [cmd, args] = command(cpu === 'server' ? pinning.server : pinning.load, [script, JSON.stringify(spec)]);
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let out = '';
  let err = '';
  let seen = 0;
  child.stdout.on('data', (d) => {
    out += d;
    for (let nl = out.indexOf('\n', seen); nl >= 0; nl = out.indexOf('\n', seen)) {
      onLine?.(out.slice(seen, nl));
      seen = nl + 1;
    }
  });
  child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      running.delete(child);
      if (code !== 0) return reject(new Error(`${script} exited with ${code}: ${err}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()));
      } catch {
        reject(new Error(`${script} printed no JSON result: ${out} ${err}`));
      }
    });
  });
}

/**
 * Time a short-lived command (`node …args`) from spawn to exit, on the load CPU
 * (or the server's with `cpu: 'server'`). Resolves with {ms, code, stdout, stderr}.
 */
export function timeProcess(nodeArgs, { env = {}, cpu = 'load', timeoutMs = 60_000 } = {}) {
  const [cmd, args] = command(cpu === 'server' ? pinning.server : pinning.load, nodeArgs);
  const startedAt = performance.now();
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      const ms = performance.now() - startedAt;
      clearTimeout(timer);
      running.delete(child);
      resolve({ ms, code, stdout, stderr });
    });
  });
}

/** Kill whatever is still running (on error or interrupt). */
export function stopAll() {
  for (const child of running) child.kill('SIGKILL');
}
