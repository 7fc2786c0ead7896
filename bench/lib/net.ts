/** Ports for the peers the bench starts as programs of their own (nginx, mitmdump). */
import { connect, createServer } from 'node:net';

/** A port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as import('node:net').AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once `port` accepts a connection; rejects when `dead()` or after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs: number, dead: () => boolean): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (dead()) throw new Error('the process exited');
    if (Date.now() > until) throw new Error(`port ${port} not open after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
