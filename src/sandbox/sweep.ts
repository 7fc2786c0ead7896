/**
 * Plain profile only: the group kill misses a descendant that left the process group
 * (setsid, daemonizing CLIs). Every descendant still carries the call's HOME in its
 * environment unless it cleared it, so after the group kill /proc is scanned for that
 * variable. Best effort (docs/sandbox.md): a process that dropped HOME escapes; the
 * isolated profile's PID namespace has no such gap.
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * How many /proc entries are read between two yields to the event loop. The reads are
 * synchronous: a readFile through the thread pool costs ~90 µs per process here, a
 * readFileSync ~15 µs, and the sweep runs after every plain call; in batches the loop
 * (the broker's other sessions) waits at most a batch, about 1 ms.
 */
const BATCH = 64;

const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/** SIGKILLs every process whose environment holds `HOME=<home>`; returns how many. */
export async function sweepByHome(home: string): Promise<number> {
  const needle = Buffer.from(`\0HOME=${home}\0`);
  const first = Buffer.from(`HOME=${home}\0`);
  let killed = 0;
  // Two passes: a process may fork while the first one reads /proc.
  for (let pass = 0; pass < 2; pass++) {
    let names: string[];
    try {
      names = readdirSync('/proc');
    } catch {
      return killed; // no procfs: nothing to sweep with
    }
    let n = 0;
    for (const name of names) {
      if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
      if (++n % BATCH === 0) await yieldToLoop();
      try {
        const env = readFileSync(`/proc/${name}/environ`);
        if (env.includes(needle) || env.subarray(0, first.length).equals(first)) {
          process.kill(Number(name), 'SIGKILL');
          killed += 1;
        }
      } catch {
        // gone, or not ours to read
      }
    }
  }
  return killed;
}
