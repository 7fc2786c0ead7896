/**
 * Plain profile only: the group kill misses a descendant that left the process group
 * (setsid, daemonizing CLIs). Every descendant still carries the call's HOME in its
 * environment unless it cleared it, so after the group kill /proc is scanned for that
 * variable. Best effort (docs/sandbox.md): a process that dropped HOME escapes; the
 * isolated profile's PID namespace has no such gap.
 */
import { readdir, readFile } from 'node:fs/promises';

/** SIGKILLs every process whose environment holds `HOME=<home>`; returns how many. */
export async function sweepByHome(home: string): Promise<number> {
  const needle = Buffer.from(`\0HOME=${home}\0`);
  const first = Buffer.from(`HOME=${home}\0`);
  let killed = 0;
  // Two passes: a process may fork while the first one reads /proc.
  for (let pass = 0; pass < 2; pass++) {
    let names: string[];
    try {
      names = await readdir('/proc');
    } catch {
      return killed; // no procfs: nothing to sweep with
    }
    for (const name of names) {
      if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
      try {
        const env = await readFile(`/proc/${name}/environ`);
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
