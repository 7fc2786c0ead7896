/**
 * What the whole-run benches compare a governed `gh` with: the same gh through a plain
 * CONNECT tunnel (a node `net` pipe, no TLS termination) to the mock vendor, and any process
 * under GNU time for its wall, CPU and peak memory.
 */
import { execFile, spawn } from 'node:child_process';
import { connect, createServer, type Server } from 'node:net';
import { promisify } from 'node:util';

export const GH = '/usr/bin/gh';
export const TIME = '/usr/bin/time';

/**
 * A whole-process figure from GNU time: wall ms (GNU time's, in 10 ms steps), CPU ms (user +
 * system), peak RSS MiB; and spawn → exit as this process saw it (`outerMs`, sub-millisecond,
 * GNU time's own exec included, the same for every process measured so).
 */
export interface Proc {
  wallMs: number;
  cpuMs: number;
  peakMiB: number;
  outerMs: number;
}

/** Runs `argv` under GNU time; rejects when it exits non-zero. */
export async function timed(argv: string[], env: NodeJS.ProcessEnv): Promise<Proc> {
  const t0 = performance.now();
  const { stderr } = await promisify(execFile)(TIME, ['-f', '@@ %e %U %S %M', ...argv], {
    env,
    maxBuffer: 16 << 20,
  });
  const outerMs = performance.now() - t0;
  const m = /@@ ([\d.]+) ([\d.]+) ([\d.]+) (\d+)\s*$/.exec(stderr);
  if (!m) throw new Error(`no figures from ${TIME}: ${stderr.slice(-400)}`);
  return {
    wallMs: Number(m[1]) * 1000,
    cpuMs: (Number(m[2]) + Number(m[3])) * 1000,
    peakMiB: Number(m[4]) / 1024,
    outerMs,
  };
}

/** Spawn → exit of a process in ms (finer than GNU time's 10 ms); rejects when it exits non-zero. */
export function spawnMs(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    p.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    p.stdout.resume();
    p.once('error', reject);
    p.once('close', (code) =>
      code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${cmd} exited ${code}: ${err}`)),
    );
  });
}

/** A CONNECT tunnel to `target`, like bench/servers/tunnel.ts: what any proxy costs. */
export function startTunnel(target: {
  host: string;
  port: number;
}): Promise<{ server: Server; port: number }> {
  const server = createServer((client) => {
    client.once('data', (head) => {
      if (!head.toString('latin1').startsWith('CONNECT ')) return client.destroy();
      const up = connect(target.port, target.host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        client.pipe(up).pipe(client);
      });
      up.on('error', () => client.destroy());
      client.on('error', () => up.destroy());
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, port: (server.address() as { port: number }).port }),
    ),
  );
}
