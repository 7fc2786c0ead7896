/**
 * The proxy a crawled CLI is given: it refuses every request and records where it wanted to
 * go. Reading help needs no network, so there is no broker session and no credential: the
 * child's only way out (the isolated profile has no network of its own) ends here with a
 * 403 and the connection closed. A crawl opens one per help call, so an attempt is recorded
 * against the command whose help made it.
 */
import { createServer, type Server, type Socket } from 'node:net';

/** One refused request: the target from its request line (`CONNECT host:port`, or an absolute URL's host). */
export interface RefusedAttempt {
  method: string;
  target: string;
}

const MAX_HEAD_BYTES = 8 * 1024;
const REFUSAL =
  'HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 43\r\nConnection: close\r\n\r\nclibroker: no network while reading help.\n';

export interface RefusingProxy {
  /** `http://127.0.0.1:<port>`: the launcher inside the isolated profile listens on the same port */
  readonly url: string;
  readonly attempts: readonly RefusedAttempt[];
  close(): Promise<void>;
}

function targetOf(line: string): RefusedAttempt | undefined {
  const m = /^([A-Z]{1,16}) (\S{1,2048}) HTTP\/1\.[01]$/.exec(line);
  if (!m) return undefined;
  const [, method, raw] = m as unknown as [string, string, string];
  if (method === 'CONNECT') return { method, target: raw.toLowerCase() };
  try {
    const u = new URL(raw);
    // host and port only: a path or query may hold anything
    return { method, target: `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}` };
  } catch {
    return { method, target: '(not a URL)' };
  }
}

/** Starts a refusing proxy on 127.0.0.1 with a port of the kernel's choosing. */
export async function startRefusingProxy(): Promise<RefusingProxy> {
  const attempts: RefusedAttempt[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let head = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      head += chunk;
      const eol = head.indexOf('\r\n');
      if (eol < 0 && head.length < MAX_HEAD_BYTES) return;
      socket.removeAllListeners('data');
      attempts.push(
        targetOf(eol < 0 ? '' : head.slice(0, eol)) ?? { method: '(unreadable)', target: '(unreadable)' },
      );
      socket.end(REFUSAL);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
