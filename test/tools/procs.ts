/** Helpers to look at host processes and wait on conditions, for the shell tool tests. */
import { readdirSync, readFileSync } from 'node:fs';

/** Host pids whose command line contains `marker`, plus all their descendants. */
export function processTree(marker: string): Set<number> {
  const parent = new Map<number, number>();
  const found = new Set<number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // stat: "pid (comm) state ppid ..." — comm may contain spaces, so read after the last ')'.
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      if (cmdline.includes(marker)) found.add(pid);
    } catch {
      // exited meanwhile
    }
  }
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parent) {
      if (!found.has(pid) && found.has(ppid)) {
        found.add(pid);
        grew = true;
      }
    }
  }
  return found;
}

/** Whether a host process exists (and is not a zombie waiting to be reaped). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Poll `check` every 25 ms until it returns a truthy value, or fail after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
