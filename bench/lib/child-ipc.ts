/**
 * The child side of the bench's IPC: announce readiness, answer CPU questions with
 * process.cpuUsage() (µs resolution, every thread) and memory ones with process.memoryUsage(),
 * exit cleanly when asked.
 */
import type { ReadyMessage } from './proc.js';

export function serveIpc(
  ready: Omit<ReadyMessage, 'type'>,
  onStop: () => Promise<void> | void = () => {},
): void {
  process.on('message', (m: { type?: string }) => {
    if (m.type === 'cpu') {
      const u = process.cpuUsage();
      process.send!({ type: 'cpu', micros: u.user + u.system });
    } else if (m.type === 'mem') {
      process.send!({ type: 'mem', ...process.memoryUsage() });
    } else if (m.type === 'stop') {
      void Promise.resolve(onStop()).finally(() => process.exit(0));
    }
  });
  // The parent went away: do not linger.
  process.on('disconnect', () => process.exit(0));
  process.send!({ type: 'ready', ...ready });
}

/** `--name value` from argv. */
export function arg(name: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i === -1 ? undefined : process.argv[i + 1];
  if (v === undefined) throw new Error(`missing --${name}`);
  return v;
}
