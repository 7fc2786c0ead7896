/**
 * nginx (Debian's `nginx-light`) as a peer: the fairest TLS-terminating configuration we can
 * defend, run only when it is installed (`scripts/install-bench-peers.sh` installs it).
 *
 * - One process (`master_process off`, one worker's work in one pid), so its CPU and RSS are
 *   read like a node child's; clibroker is one process too.
 * - The client speaks TLS to nginx (a wildcard leaf for `*.bench.example` from a CA of the
 *   bench's own, made once with openssl in bench/.cache); nginx re-encrypts to the origin,
 *   verifies the origin's certificate against its CA (SNI and Host stay the request's name), and
 *   keeps upstream connections alive (`keepalive 64`, TLS sessions reused).
 * - Request bodies stream (`proxy_request_buffering off`), as clibroker's do; no access log.
 *
 * It is a reverse proxy, not a CONNECT proxy: the client connects to it the way it connects to
 * the origin (no CONNECT round trip). That is what nginx does best, so it is a lower bound for
 * any proxy terminating TLS on both legs.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, waitForPort } from '../lib/net.js';
import { procCpuMicros, stopChild } from '../lib/proc.js';
import type { BenchEnv, PathAdapter } from './types.js';

const CANDIDATES = ['/usr/sbin/nginx', '/usr/bin/nginx'];

export function nginxBinary(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/** A CA and a `*.bench.example` leaf for nginx's client side, made once per cache directory. */
export function nginxCerts(cacheDir: string): { ca: string; cert: string; key: string } {
  const dir = join(cacheDir, 'nginx-tls');
  const out = { ca: join(dir, 'ca.pem'), cert: join(dir, 'leaf.pem'), key: join(dir, 'leaf.key') };
  if (existsSync(out.ca) && existsSync(out.cert) && existsSync(out.key)) return out;
  mkdirSync(dir, { recursive: true });
  const ssl = (args: string[]): void => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
  };
  ssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '3650',
    '-subj',
    '/CN=clibroker bench nginx CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  ]);
  ssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'leaf.key',
    '-out',
    'leaf.csr',
    '-subj',
    '/CN=*.bench.example',
  ]);
  writeFileSync(
    join(dir, 'leaf.ext'),
    'subjectAltName=DNS:*.bench.example\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  ssl([
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'leaf.pem',
    '-days',
    '3650',
    '-extfile',
    'leaf.ext',
  ]);
  return out;
}

export function nginxConf(p: {
  port: number;
  upstreamPort: number;
  upstreamCaFile: string;
  cert: string;
  key: string;
  dir: string;
}): string {
  return `daemon off;
master_process off;
worker_processes 1;
pid ${join(p.dir, 'nginx.pid')};
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(p.dir, 'body')};
  proxy_temp_path ${join(p.dir, 'proxy')};
  client_max_body_size 9m;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  upstream origin {
    server 127.0.0.1:${p.upstreamPort};
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${p.port} ssl;
    server_name *.bench.example;
    ssl_certificate ${p.cert};
    ssl_certificate_key ${p.key};
    ssl_protocols TLSv1.2 TLSv1.3;
    location / {
      proxy_pass https://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_ssl_server_name on;
      proxy_ssl_name $host;
      proxy_ssl_verify on;
      proxy_ssl_trusted_certificate ${p.upstreamCaFile};
      proxy_ssl_session_reuse on;
      proxy_request_buffering off;
    }
  }
}
`;
}

/** Start nginx on a free port; resolves once its port accepts connections. */
export async function startNginx(
  env: BenchEnv,
  name = 'nginx',
): Promise<{ proc: ChildProcess; port: number; caPem: string }> {
  const bin = nginxBinary();
  if (!bin) throw new Error('nginx is not installed');
  const certs = nginxCerts(env.cacheDir);
  const port = await freePort();
  const dir = join(env.cacheDir, `${name}-${port}`);
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    nginxConf({
      port,
      upstreamPort: env.upstreamPort,
      upstreamCaFile: env.upstreamCaFile,
      cert: certs.cert,
      key: certs.key,
      dir,
    }),
  );
  const proc = spawn(bin, ['-p', dir, '-c', conf, '-e', 'stderr'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => {
    if (stderr.length < 8192) stderr += c.toString();
  });
  try {
    await waitForPort(port, 10_000, () => proc.exitCode !== null);
  } catch (err) {
    proc.kill('SIGKILL');
    throw new Error(`nginx did not start: ${(err as Error).message}\n${stderr}`);
  }
  return { proc, port, caPem: readFileSync(certs.ca, 'utf8') };
}

export const nginx: PathAdapter = {
  name: 'nginx',
  role: 'peer',
  async skipReason() {
    if (!nginxBinary()) return 'skipped: not installed (nginx not found; Debian package nginx-light)';
    if (spawnSync('which', ['openssl']).status !== 0) return 'skipped: openssl not found (it makes the leaf)';
    return undefined;
  },
  async start(env) {
    const { proc, port, caPem } = await startNginx(env);
    const pid = proc.pid!;
    return {
      route: { port, caPem, proxy: false },
      pid,
      cpuMicros: async () => procCpuMicros(pid),
      stop: () => stopChild(proc, () => proc.kill('SIGQUIT')),
    };
  },
};
