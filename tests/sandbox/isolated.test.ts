/**
 * The isolated profile's network: nothing but the broker is reachable, even for a client
 * that ignores HTTPS_PROXY (Node 20's fetch) — while curl through a real broker session,
 * bridged into the namespace, reaches its upstream. Each check also runs in the plain
 * profile, where the same probe does reach the outside: that is what makes it able to fail.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import t from 'tap';
import { ETC_ALLOWED, SYSTEM_DIRS } from '../../src/sandbox/allowlist.js';
import { isolationUnavailable, runSandboxed } from '../../src/sandbox/index.js';
import { createBroker } from '../../src/broker/broker.js';
import type { AuditEvent } from '../../src/broker/types.js';
import { isolatedSkip } from '../helpers/bwrap.js';
import { startUpstream } from '../helpers/upstream.js';
import { opts } from './helpers.js';

/** false where bwrap works; where not, the file fails under CI and each test here is skipped with why elsewhere */
const skip = await isolatedSkip();

/** A node script (run with node -e) that reports what it could reach, as JSON on stdout. */
const PROBE = `
const net = require('node:net');
const [httpsPort, tcpHost, tcpPort] = process.argv.slice(1);
const tcp = (host, port) => new Promise((r) => {
  const s = net.connect(Number(port), host, () => { s.destroy(); r('connected'); });
  s.on('error', (e) => r(e.code));
  s.setTimeout(3000, () => { s.destroy(); r('timeout'); });
});
(async () => {
  const out = {};
  try { await fetch('https://127.0.0.1:' + httpsPort + '/', { signal: AbortSignal.timeout(3000) }); out.fetch = 'ok'; }
  catch (e) { out.fetch = (e.cause && e.cause.code) || e.name; }
  out.loopback = await tcp('127.0.0.1', httpsPort);
  if (tcpHost) out.external = await tcp(tcpHost, tcpPort);
  console.log(JSON.stringify(out));
})();
`;

function externalAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

t.test('fallback: without a working bwrap the plain profile runs and says why', async (t) => {
  // bwrap missing, and installed but refusing (exit 1, as in a container without user namespaces)
  for (const bwrap of ['/nonexistent/bwrap', '/usr/bin/false']) {
    const r = await runSandboxed(opts('true', [], { image: 'isolated', bwrap }));
    t.equal(r.profile, 'plain', bwrap);
    t.equal(r.exitCode, 0, r.stderr);
    t.match(r.profileFallback, bwrap, `${bwrap}: the fallback names the bwrap that did not run`);
  }
});

t.test('the probe says why when bwrap cannot run', async (t) => {
  t.match(await isolationUnavailable('/nonexistent/bwrap'), /^\/nonexistent\/bwrap cannot be run: ENOENT/);
  const notBwrap = await isolationUnavailable('/usr/bin/false');
  t.match(notBwrap, /^\/usr\/bin\/false failed \(exit 1\)/, 'a non-zero exit is reported with its stderr');
});

t.test('isolated: a client that ignores the proxy reaches nothing outside', { skip }, async (t) => {
  const upstream = await startUpstream(['outside.example.com']);
  const anyAddr: Server = createServer((s) => s.destroy());
  await new Promise<void>((r) => anyAddr.listen(0, '0.0.0.0', r));
  t.teardown(async () => {
    await upstream.close();
    await new Promise((r) => anyAddr.close(r));
  });
  const ext = externalAddress();
  const args = [
    '-e',
    PROBE,
    String(upstream.port),
    ...(ext ? [ext, String((anyAddr.address() as { port: number }).port)] : []),
  ];

  const plain = JSON.parse((await runSandboxed(opts('node', args, { image: 'plain' }))).stdout);
  t.equal(plain.loopback, 'connected', 'control: from the plain profile the host loopback is reachable');
  t.not(
    plain.fetch,
    'ECONNREFUSED',
    'control: plain fetch reached the server (it fails on TLS trust, not on connect)',
  );
  if (ext) t.equal(plain.external, 'connected', `control: plain reaches ${ext}`);

  const r = await runSandboxed(opts('node', args, { image: 'isolated' }));
  t.equal(r.profile, 'isolated');
  const iso = JSON.parse(r.stdout);
  t.equal(iso.fetch, 'ECONNREFUSED', "fetch to the host's loopback HTTPS server finds nothing listening");
  t.equal(iso.loopback, 'ECONNREFUSED', 'a direct TCP connect to the same port fails');
  if (ext) t.match(iso.external, /^(ENETUNREACH|EHOSTUNREACH|timeout)$/, `no route to ${ext}`);
  t.equal(upstream.received.length, 0, 'the outside server saw no request');
});

t.test('isolated: curl through the bridged broker session reaches the upstream', { skip }, async (t) => {
  // Built here rather than with tests/helpers/broker.ts's fixture, so this file depends only on the engine's API.
  const upstream = await startUpstream(['api.example.com']);
  const events: AuditEvent[] = [];
  const broker = await createBroker({
    upstream: { ca: upstream.pki.caPem, resolve: upstream.resolve, allowAddresses: ['127.0.0.0/8'] },
    onAudit: (e) => events.push(e),
  });
  t.teardown(async () => {
    await broker.close();
    await upstream.close();
  });
  const f = { upstream, events };
  const session = broker.openSession({ egress: ['api.example.com'] });
  const r = await runSandboxed({
    ...opts('curl', ['--silent', '--show-error', '--max-time', '10', 'https://api.example.com/hello?x=1']),
    image: 'isolated',
    session,
  });
  t.equal(r.profile, 'isolated');
  t.equal(r.exitCode, 0, r.stderr);
  t.same(JSON.parse(r.stdout), { method: 'GET', url: '/hello?x=1', bytes: 0 });
  t.equal(f.upstream.received.length, 1, 'the upstream saw exactly one request');
  t.match(
    f.events,
    [{ type: 'egress.allowed', host: 'api.example.com', path: '/hello' }],
    'through the broker: audited',
  );

  // The same curl told to skip the proxy cannot get out of the namespace at all.
  const direct = await runSandboxed({
    ...opts('curl', [
      '--silent',
      '--show-error',
      '--noproxy',
      '*',
      '--max-time',
      '5',
      `https://127.0.0.1:${f.upstream.port}/direct`,
    ]),
    image: 'isolated',
    session,
  });
  t.equal(direct.exitCode, 7, `curl: could not connect (${direct.stderr.trim()})`);
  t.equal(f.upstream.received.length, 1, 'nothing more reached the upstream');
});

t.test(
  'isolated: only system directories and the /etc allowlist, read-only; host paths absent',
  { skip },
  async (t) => {
    const script = [
      'ls /',
      'echo ---',
      'ls -A /etc',
      'echo ---',
      'test -e /work || test -e /root || test -e /home || test -e /var || test -e /run && echo HOST-VISIBLE',
      'touch /usr/clibroker-x 2>/dev/null && echo USR-WRITABLE',
      'touch /etc/clibroker-x 2>/dev/null && echo ETC-WRITABLE',
      'touch /clibroker-x 2>/dev/null && echo ROOT-WRITABLE',
      'test -e /etc/shadow && echo SHADOW-VISIBLE',
      'test -e /etc/ssl && echo SSL-VISIBLE',
      'test -s /etc/passwd && echo passwd-ok',
      'touch "$HOME/ok" && echo home-ok',
      'touch /tmp/ok && echo tmp-ok',
      'grep -c . /proc/net/dev',
      'echo "procs=$(ls /proc | grep -c "^[0-9]")"',
    ].join('; ');
    const r = await runSandboxed(opts('sh', ['-c', script], { image: 'isolated' }));
    t.equal(r.profile, 'isolated');
    const [rootList = '', etcList = '', rest = ''] = r.stdout.split('---\n');
    t.notMatch(rest, /VISIBLE|WRITABLE/, 'no host path, nothing written outside HOME and /tmp');
    t.match(
      rest,
      /^passwd-ok\nhome-ok\ntmp-ok\n3\nprocs=\d+\n$/,
      'passwd readable, HOME and /tmp writable, only the lo interface (2 header lines + lo)',
    );
    const procs = Number(/procs=(\d+)/.exec(rest)?.[1]);
    t.ok(
      procs > 0 && procs <= 10,
      `its own PID namespace: ${procs} processes visible (bwrap, launcher, sh, a subshell, ls, grep; the host has dozens)`,
    );
    const root = rootList.split('\n').filter(Boolean);
    const allowed = new Set([...SYSTEM_DIRS.map((d) => d.slice(1)), 'dev', 'etc', 'proc', 'tmp']);
    t.same(
      root.filter((d) => !allowed.has(d)),
      [],
      `nothing but system dirs at / (${root.join(' ')})`,
    );
    // Every allowlisted entry this host has, and nothing else (the host's /etc has dozens).
    const expected = ETC_ALLOWED.filter((p) => {
      try {
        const real = realpathSync(p);
        return !lstatSync(p).isSymbolicLink() || SYSTEM_DIRS.some((d) => real.startsWith(`${d}/`));
      } catch {
        return false;
      }
    }).map((p) => p.slice('/etc/'.length));
    t.ok(
      expected.includes('passwd') && expected.includes('ld.so.cache'),
      'control: the host has entries to show',
    );
    t.same(
      etcList.split('\n').filter(Boolean).sort(),
      expected.sort(),
      `/etc holds the allowlist only (${etcList.trim()})`,
    );
  },
);

t.test(
  "isolated: /etc/localtime is the host's symlink into the zone files, and it resolves inside",
  {
    skip:
      skip ||
      (lstatSync('/etc/localtime', { throwIfNoEntry: false })?.isSymbolicLink()
        ? false
        : 'no /etc/localtime symlink here'),
  },
  async (t) => {
    const r = await runSandboxed(
      opts('sh', ['-c', 'readlink /etc/localtime; test -s /etc/localtime && echo resolves'], {
        image: 'isolated',
      }),
    );
    t.equal(r.stdout, `${readlinkSync('/etc/localtime')}\nresolves\n`, r.stderr);
  },
);
