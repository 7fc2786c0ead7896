/**
 * mitmproxy (Debian's `mitmproxy` package) as a peer, run as `mitmdump` only when it is
 * installed — the bench never installs it. An addon maps every server connection to the
 * bench upstream (SNI and Host stay the real name); the upstream is verified against its CA;
 * bodies over 1 MiB are streamed rather than buffered, its fairest setting for S3.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, waitForPort } from '../lib/net.js';
import { procCpuMicros, stopChild } from '../lib/proc.js';
import type { PathAdapter } from './types.js';

const ADDON = `import os

PORT = int(os.environ["BENCH_UPSTREAM_PORT"])


def server_connect(data):
    # every bench host name is served by the one local upstream
    data.server.address = ("127.0.0.1", PORT)
`;

export const mitmproxy: PathAdapter = {
  name: 'mitmproxy',
  role: 'peer',
  async skipReason() {
    return spawnSync('which', ['mitmdump']).status === 0
      ? undefined
      : 'skipped: not installed (mitmdump not found; Debian package mitmproxy)';
  },
  async start(env) {
    const port = await freePort();
    const confdir = join(env.cacheDir, 'mitmproxy');
    const addon = join(env.cacheDir, 'mitmproxy-route.py');
    writeFileSync(addon, ADDON);
    const set = (kv: string): string[] => ['--set', kv];
    const proc = spawn(
      'mitmdump',
      [
        '--listen-host',
        '127.0.0.1',
        '--listen-port',
        String(port),
        '-q',
        ...set(`confdir=${confdir}`),
        ...set(`ssl_verify_upstream_trusted_ca=${env.upstreamCaFile}`),
        ...set('connection_strategy=lazy'),
        ...set('stream_large_bodies=1m'),
        '-s',
        addon,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, BENCH_UPSTREAM_PORT: String(env.upstreamPort) },
      },
    );
    let stderr = '';
    proc.stderr!.on('data', (c: Buffer) => {
      if (stderr.length < 8192) stderr += c.toString();
    });
    try {
      await waitForPort(port, 30_000, () => proc.exitCode !== null);
    } catch (err) {
      proc.kill('SIGKILL');
      throw new Error(`mitmdump did not start: ${(err as Error).message}\n${stderr}`);
    }
    const pid = proc.pid!;
    return {
      route: { port, caPem: readFileSync(join(confdir, 'mitmproxy-ca-cert.pem'), 'utf8'), proxy: true },
      pid,
      cpuMicros: async () => procCpuMicros(pid),
      stop: () => stopChild(proc, () => proc.kill('SIGTERM')),
    };
  },
};
