/**
 * http-mitm-proxy (npm) as a peer, configured as fairly as it allows: keep-alive on both
 * sides, an https.Agent that verifies the bench upstream's CA, and every name mapped to the
 * upstream in its onRequest hook (the same job as clibroker's `upstream.resolve`). Its CA
 * (RSA 2048, slow to make) is kept in bench/.cache between runs; the per-host leaves are not,
 * so S4 measures its real minting.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, serveIpc } from '../lib/child-ipc.js';

interface MitmCtx {
  proxyToServerRequestOptions: { host: string; port: number; servername?: string };
}
interface MitmProxy {
  httpPort: number;
  onError(fn: (ctx: unknown, err: Error, kind: string) => void): void;
  onRequest(fn: (ctx: MitmCtx, cb: () => void) => void): void;
  listen(opts: Record<string, unknown>, cb: (err?: Error) => void): void;
  close(): void;
}

// Not a static import: the bench must typecheck and run when the peer is not installed.
const moduleName = 'http-mitm-proxy';
const { Proxy: MitmProxyClass } = (await import(moduleName)) as { Proxy: new () => MitmProxy };

const upstreamPort = Number(arg('upstream-port'));
const caCache = arg('ca-cache');
const sslCaDir = mkdtempSync(join(tmpdir(), 'clibroker-bench-mitm-'));
const CA_FILES = ['certs/ca.pem', 'keys/ca.private.key', 'keys/ca.public.key'];
if (existsSync(join(caCache, CA_FILES[0]!))) {
  for (const d of ['certs', 'keys']) mkdirSync(join(sslCaDir, d), { recursive: true });
  for (const f of CA_FILES) copyFileSync(join(caCache, f), join(sslCaDir, f));
}

// It logs every new host on stdout/stderr; the parent ignores stdout.
console.debug = () => {};
const proxy = new MitmProxyClass();
proxy.onError(() => {});
proxy.onRequest((ctx, cb) => {
  const o = ctx.proxyToServerRequestOptions;
  o.servername = o.host;
  o.host = '127.0.0.1';
  o.port = upstreamPort;
  cb();
});
proxy.listen(
  {
    host: '127.0.0.1',
    port: 0,
    sslCaDir,
    keepAlive: true,
    httpsAgent: new Agent({ keepAlive: true, maxSockets: 32, ca: readFileSync(arg('upstream-ca'), 'utf8') }),
  },
  (err) => {
    if (err) throw err;
    if (!existsSync(join(caCache, CA_FILES[0]!))) {
      for (const d of ['certs', 'keys']) mkdirSync(join(caCache, d), { recursive: true });
      for (const f of CA_FILES) copyFileSync(join(sslCaDir, f), join(caCache, f));
    }
    serveIpc({ port: proxy.httpPort, caPem: readFileSync(join(sslCaDir, CA_FILES[0]!), 'utf8') }, () =>
      proxy.close(),
    );
  },
);
