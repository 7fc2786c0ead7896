/**
 * Hidden paths: the files a broker daemon holds (its configuration, a secret file, its store,
 * its socket) stay unreadable from the isolated child even where a read-only bind shows
 * their directory, while a sibling that is not hidden stays readable. Every case runs once
 * without hiddenPaths first: the child then does read the file (or reach the socket), which
 * is what lets the hidden run fail.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { hiddenMasks } from '../../src/sandbox/hidden.js';
import { runSandboxed } from '../../src/sandbox/index.js';
import { isolatedSkip } from '../helpers/bwrap.js';
import { opts } from './helpers.js';

/** false where bwrap works; where not, the file fails under CI and each test here is skipped with why elsewhere */
const skip = await isolatedSkip();

/** A daemon's directory: each file holds its own marker, which the child must not print. */
async function daemonDir(t: { teardown(fn: () => unknown): void }) {
  const mark = (name: string) => `${name}-${randomBytes(6).toString('hex')}`;
  const m = {
    secret: mark('SECRET'),
    config: mark('CONFIG'),
    store: mark('STORE'),
    token: mark('TOKEN'),
    linked: mark('LINKED'),
    pub: mark('PUBLIC'),
    socket: mark('SOCKET'),
  };
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-daemon-'));
  // a second directory, also bound, that a symlink in the first points into
  const other = mkdtempSync(join(tmpdir(), 'clibroker-other-'));
  const p = {
    dir,
    other,
    secret: join(dir, 'secret.txt'),
    config: join(dir, 'config.json'),
    store: join(dir, 'store.db'),
    secrets: join(dir, 'secrets'),
    link: join(dir, 'link.txt'),
    linkTarget: join(other, 'target.txt'),
    pub: join(dir, 'public.txt'),
    socket: join(dir, 'daemon.sock'),
  };
  writeFileSync(p.secret, m.secret, { mode: 0o600 });
  writeFileSync(p.config, JSON.stringify({ version: 1, note: m.config }));
  const db = new Database(p.store);
  db.exec('CREATE TABLE t (v TEXT)');
  db.prepare('INSERT INTO t VALUES (?)').run(m.store);
  db.close();
  mkdirSync(p.secrets);
  writeFileSync(join(p.secrets, m.token), 'x');
  writeFileSync(p.linkTarget, m.linked);
  symlinkSync(p.linkTarget, p.link);
  writeFileSync(p.pub, m.pub);
  let connections = 0;
  const server = createServer((s) => {
    connections++;
    // read the request, so the connection ends (and close can finish) when curl hangs up
    s.resume();
    s.end(`HTTP/1.1 200 OK\r\ncontent-length: ${m.socket.length}\r\nconnection: close\r\n\r\n${m.socket}`);
  });
  await new Promise<void>((r) => server.listen(p.socket, r));
  t.teardown(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  });
  return { p, m, connections: () => connections };
}

t.test(
  'isolated: hidden files, a directory, a symlink and a socket under a read-only bind cannot be read; a sibling can',
  { skip },
  async (t) => {
    const d = await daemonDir(t);
    const { p, m } = d;
    const readOnlyPaths = [p.dir, p.other];
    const hiddenPaths = [
      p.secret,
      p.config,
      p.store,
      p.secrets,
      p.link,
      p.socket,
      join(p.dir, 'missing.txt'),
    ];
    const curlSocket = [
      '--silent',
      '--show-error',
      '--noproxy',
      '*',
      '--max-time',
      '5',
      '--unix-socket',
      p.socket,
      'http://daemon/',
    ];
    const cases: Record<string, { entrypoint: string; args: string[]; marker: string }> = {
      'a secret file (cat)': { entrypoint: '/bin/cat', args: [p.secret], marker: m.secret },
      'the configuration file (cat)': { entrypoint: '/bin/cat', args: [p.config], marker: m.config },
      'the SQLite store (cat)': { entrypoint: '/bin/cat', args: [p.store], marker: m.store },
      'a directory of secrets (ls)': { entrypoint: '/bin/ls', args: [p.secrets], marker: m.token },
      'a symlink: its target, reached at its own path too (cat)': {
        entrypoint: '/bin/cat',
        args: [p.link, p.linkTarget],
        marker: m.linked,
      },
      'a listening unix socket (curl --unix-socket)': {
        entrypoint: '/usr/bin/curl',
        args: curlSocket,
        marker: m.socket,
      },
    };
    t.plan(Object.keys(cases).length * 3 + 4);
    for (const [name, c] of Object.entries(cases)) {
      const seen = await runSandboxed(opts(c.entrypoint, c.args, { image: 'isolated', readOnlyPaths }));
      t.match(seen.stdout, c.marker, `${name}: control, without hiddenPaths the child reads it`);
      const hidden = await runSandboxed(
        opts(c.entrypoint, c.args, { image: 'isolated', readOnlyPaths, hiddenPaths }),
      );
      t.notMatch(hidden.stdout + hidden.stderr, c.marker, `${name}: hidden, the child cannot read it`);
      t.ok(
        hidden.hiddenPathsEnforced && hidden.profile === 'isolated',
        `${name}: the result says the paths were hidden`,
      );
    }
    t.equal(d.connections(), 1, 'the socket server was reached by the control run only');

    const sibling = await runSandboxed(
      opts('/bin/cat', [p.pub], { image: 'isolated', readOnlyPaths, hiddenPaths }),
    );
    t.equal(sibling.stdout, m.pub, 'the unhidden sibling in the same directory stays readable');
    const listing = await runSandboxed(
      opts('/bin/ls', ['-A', p.dir], { image: 'isolated', readOnlyPaths, hiddenPaths }),
    );
    t.match(listing.stdout, 'public.txt', 'the directory itself stays listed');
    const socket = await runSandboxed(
      opts('/usr/bin/curl', curlSocket, { image: 'isolated', readOnlyPaths, hiddenPaths }),
    );
    t.equal(socket.exitCode, 7, `curl could not connect to the hidden socket (${socket.stderr.trim()})`);
  },
);

t.test(
  'isolated: a hidden file stays hidden when its directory is bound through a symlink',
  { skip },
  async (t) => {
    const { p, m } = await daemonDir(t);
    const alias = join(p.other, 'daemon-alias');
    symlinkSync(p.dir, alias);
    const script = `cat ${alias}/secret.txt; cat ${alias}/public.txt`;
    const seen = await runSandboxed(
      opts('/bin/sh', ['-c', script], { image: 'isolated', readOnlyPaths: [alias] }),
    );
    t.match(seen.stdout, m.secret, 'control: the bind shows the secret under the alias');
    const r = await runSandboxed(
      opts('/bin/sh', ['-c', script], { image: 'isolated', readOnlyPaths: [alias], hiddenPaths: [p.secret] }),
    );
    t.notMatch(
      r.stdout,
      m.secret,
      'the secret, hidden by its real path, is masked where the alias bind shows it',
    );
    t.match(r.stdout, m.pub, 'its sibling is still readable under the alias');
  },
);

t.test(
  'isolated: hiding an ancestor of the call directory hides the rest of it, and the call still runs',
  { skip },
  async (t) => {
    const { p, m } = await daemonDir(t);
    const script = `cat ${p.pub}; touch "$HOME/x" && echo home-ok; test -s "$SSL_CERT_FILE" && echo ca-ok`;
    // Both: the whole of the host's tmp bound (its mask must go before the call's bind, or
    // the call's directory would vanish with it), and a bind inside it (masked after).
    const readOnlyPaths = [tmpdir(), p.dir];
    const seen = await runSandboxed(opts('/bin/sh', ['-c', script], { image: 'isolated', readOnlyPaths }));
    t.match(seen.stdout, m.pub, 'control: the bound file is visible');
    const r = await runSandboxed(
      opts('/bin/sh', ['-c', script], { image: 'isolated', readOnlyPaths, hiddenPaths: [tmpdir()] }),
    );
    t.notMatch(r.stdout, m.pub, `nothing of the hidden ${tmpdir()} is visible`);
    t.match(
      r.stdout,
      /home-ok\nca-ok\n$/,
      "the call's own directory (HOME, the CA file) is still there and writable",
    );
    t.equal(r.exitCode, 0);
  },
);

t.test(
  'isolated: a hidden path is masked where a system bind or the /etc allowlist shows it',
  { skip },
  async (t) => {
    // /etc/passwd is on the allowlist and /usr/share/zoneinfo under /usr: both shown, both maskable.
    const script = 'head -c 5 /etc/passwd; echo; test -s /usr/share/zoneinfo/Etc/UTC && echo zone-ok';
    const seen = await runSandboxed(opts('/bin/sh', ['-c', script], { image: 'isolated' }));
    t.equal(seen.stdout, 'root:\nzone-ok\n', 'control: without hiddenPaths both are read');
    const hiddenPaths = ['/etc/passwd', '/usr/share/zoneinfo/Etc/UTC'];
    const r = await runSandboxed(opts('/bin/sh', ['-c', script], { image: 'isolated', hiddenPaths }));
    t.equal(r.stdout, '\n', 'hidden, neither is read');
  },
);

t.test('plain: hiddenPaths cannot be enforced, and the result says so', async (t) => {
  const { p, m } = await daemonDir(t);
  const r = await runSandboxed(opts('/bin/cat', [p.secret], { image: 'plain', hiddenPaths: [p.secret] }));
  t.equal(r.hiddenPathsEnforced, false);
  t.equal(r.stdout, m.secret, 'a plain child reads what this process can: the gap the docs state');
});

t.test('hiddenMasks: which mounts, in which order', async (t) => {
  const { p } = await daemonDir(t);
  const callRoot = mkdtempSync(join(tmpdir(), 'clibroker-sbx-'));
  mkdirSync(join(callRoot, 'home'));
  t.teardown(() => rmSync(callRoot, { recursive: true, force: true }));
  const cases: Record<string, { hidden: string[]; shown: string[]; beforeCall: string[]; after: string[] }> =
    {
      'a file under a bind: /dev/null over it': {
        hidden: [p.secret],
        shown: [p.dir],
        beforeCall: [],
        after: ['--ro-bind', '/dev/null', p.secret],
      },
      'a socket is no directory: /dev/null': {
        hidden: [p.socket],
        shown: [p.dir],
        beforeCall: [],
        after: ['--ro-bind', '/dev/null', p.socket],
      },
      'a directory: a tmpfs': {
        hidden: [p.secrets],
        shown: [p.dir],
        beforeCall: [],
        after: ['--tmpfs', p.secrets],
      },
      'a path no bind shows: nothing to mask': {
        hidden: [p.secret],
        shown: ['/usr'],
        beforeCall: [],
        after: [],
      },
      'a missing path: skipped': { hidden: [join(p.dir, 'nope')], shown: [p.dir], beforeCall: [], after: [] },
      'a symlink: masked at its target': {
        hidden: [p.link],
        shown: [p.dir, p.other],
        beforeCall: [],
        after: ['--ro-bind', '/dev/null', p.linkTarget],
      },
      'a bind inside a hidden directory: the bind is masked': {
        hidden: [p.dir],
        shown: [p.secrets],
        beforeCall: [],
        after: ['--tmpfs', p.secrets],
      },
      "inside the call's directory: ignored": {
        hidden: [join(callRoot, 'home')],
        shown: [tmpdir()],
        beforeCall: [],
        after: [],
      },
      "an ancestor of the call's directory: before its bind": {
        hidden: [tmpdir()],
        shown: [tmpdir()],
        beforeCall: ['--tmpfs', tmpdir()],
        after: [],
      },
    };
  t.plan(Object.keys(cases).length);
  for (const [name, c] of Object.entries(cases))
    t.same(hiddenMasks(c.hidden, c.shown, callRoot), { beforeCall: c.beforeCall, after: c.after }, name);
});

t.test('hiddenPaths must be absolute paths', async (t) => {
  for (const bad of [['relative/x'], ['/ok', 'a\0b'], 'not-an-array']) {
    await t.rejects(
      runSandboxed(opts('/bin/true', [], { hiddenPaths: bad as never })),
      { code: 'INVALID_TOOL_INPUT', details: { field: 'hiddenPaths' } },
      JSON.stringify(bad),
    );
  }
});
