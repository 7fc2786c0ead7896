/**
 * The isolated profile shows the host by allowlist: a secret of the daemon's user in /etc,
 * /var/lib, /run, /home, /root, /srv, /opt or the host's /tmp cannot be read through the
 * CLI's arguments — real curl (`file://`, `-d @file`, `-K file`) and real gh
 * (`api --input file`) through a real broker session, whose upstream must never receive the
 * secret's bytes. Each read runs in the plain profile too, where it does get the secret: that
 * is what lets the isolated run fail. The files are the test's user's own, mode 0600, so only
 * what the sandbox shows stands between the child and them.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ETC_ALLOWED, inSystemDirs, visibleInSandbox } from '../../src/sandbox/allowlist.js';
import { within } from '../../src/sandbox/hidden.js';
import { isolationUnavailable, runSandboxed } from '../../src/sandbox/index.js';
import type { SandboxOptions, SandboxProfile } from '../../src/sandbox/types.js';
import { brokerFixture, type Fixture } from '../helpers/broker.js';
import { opts } from './helpers.js';

const why = await isolationUnavailable();
// .ci/run installs bubblewrap: there a missing or refusing bwrap is a failure, not a reason to skip.
const skip = why === undefined || process.env.CI ? false : why;

const HOST = 'api.github.com';

/** Where a deployment might keep a secret the daemon's user can read. */
const PLACES = ['/etc', '/var/lib', '/run', '/home', '/root', '/srv', '/opt', '/tmp'];

interface Secret {
  path: string;
  marker: string;
}

/**
 * A 0600 file in a fresh directory under `place`. Its text is a curl config naming a URL that
 * holds the marker, so a `-K` that reads it shows at the upstream; any other read carries the
 * marker in the bytes it returns or uploads.
 */
function plantSecret(t: { teardown(fn: () => unknown): void }, place: string): Secret {
  const id = randomBytes(6).toString('hex');
  const marker = `SECRET${id}`;
  const dir = join(place, `clibroker-allowlist-${id}`);
  // recursive: /home or /srv may not exist on a minimal host; what was created is removed.
  const top = mkdirSync(dir, { recursive: true, mode: 0o700 }) ?? dir;
  t.teardown(() => rmSync(top, { recursive: true, force: true }));
  const path = join(dir, 'token');
  writeFileSync(path, `url = "https://${HOST}/k/${marker}"\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { path, marker };
}

/** The ways an agent's arguments make a CLI read a file. */
const READS: Record<string, (path: string) => Pick<SandboxOptions, 'entrypoint' | 'args' | 'childEnv'>> = {
  'curl file://': (p) => ({
    entrypoint: 'curl',
    args: ['-sS', '--max-time', '10', `file://${p}`],
    childEnv: { cli: {} },
  }),
  'curl -d @file': (p) => ({
    entrypoint: 'curl',
    args: ['-sS', '--max-time', '10', '-d', `@${p}`, `https://${HOST}/d`],
    childEnv: { cli: {} },
  }),
  'curl -K file': (p) => ({
    entrypoint: 'curl',
    args: ['-sS', '--max-time', '10', '-K', p],
    childEnv: { cli: {} },
  }),
  'gh api --input file': (p) => ({
    entrypoint: 'gh',
    args: ['api', '--input', p, '-X', 'POST', '/g'],
    childEnv: { cli: { credentialEnv: ['GH_TOKEN'] } },
  }),
};

/** Runs one read in `profile`; returns whether the marker came back or reached the upstream. */
async function read(
  f: Fixture,
  how: string,
  s: Secret,
  image: SandboxProfile,
  more: Partial<SandboxOptions> = {},
): Promise<{ profile: string; leaked: boolean; output: string }> {
  const from = f.upstream.received.length;
  const r = await runSandboxed({
    ...opts('true', []),
    ...READS[how]!(s.path),
    image,
    session: f.session({ tier: 'write' }),
    ...more,
  });
  const sent = f.upstream.received
    .slice(from)
    .some((q) => q.url.includes(s.marker) || q.body.includes(s.marker));
  const output = r.stdout + r.stderr;
  return { profile: r.profile, leaked: sent || output.includes(s.marker), output: output.slice(0, 300) };
}

for (const place of PLACES) {
  t.test(
    `isolated: a 0600 secret under ${place} cannot be read through the CLI's arguments`,
    { skip },
    async (t) => {
      if (why !== undefined) return void t.fail(`bwrap does not work here: ${why}`);
      const f = await brokerFixture(t, { hosts: [HOST] });
      const s = plantSecret(t, place);
      t.notOk(visibleInSandbox(s.path), 'visibleInSandbox agrees it is not shown');
      for (const how of Object.keys(READS)) {
        const plain = await read(f, how, s, 'plain');
        t.ok(plain.leaked, `${how}: control, the plain child gets it (${plain.output})`);
        const iso = await read(f, how, s, 'isolated');
        t.equal(iso.profile, 'isolated', `${how}: ran isolated`);
        t.notOk(iso.leaked, `${how}: isolated, neither the output nor the upstream holds it (${iso.output})`);
      }
    },
  );
}

t.test(
  'isolated: the same reads work on what the image adds, and on an allowlisted file',
  { skip },
  async (t) => {
    if (why !== undefined) return void t.fail(`bwrap does not work here: ${why}`);
    const f = await brokerFixture(t, { hosts: [HOST] });
    const s = plantSecret(t, '/srv');
    const readOnlyPaths = [join(s.path, '..')];
    t.ok(visibleInSandbox(s.path, readOnlyPaths), 'visibleInSandbox counts readOnlyPaths');
    for (const how of Object.keys(READS)) {
      const r = await read(f, how, s, 'isolated', { readOnlyPaths });
      t.ok(r.leaked && r.profile === 'isolated', `${how}: a file under readOnlyPaths is read (${r.output})`);
    }
    const passwd = await runSandboxed(opts('curl', ['-sS', 'file:///etc/passwd'], { image: 'isolated' }));
    t.match(passwd.stdout, /^root:/m, '/etc/passwd, on the allowlist, is read');
  },
);

t.test('the allowlist: no place that holds secrets, and what visibleInSandbox answers', async (t) => {
  const secretPlaces = [
    '/etc/shadow',
    '/etc/gshadow',
    '/etc/sudoers',
    '/etc/ssh',
    '/etc/ssl/private',
    '/etc/clibroker',
  ];
  for (const entry of ETC_ALLOWED) {
    t.ok(entry.startsWith('/etc/') && !entry.includes('..'), `${entry}: an absolute entry of /etc`);
    for (const secret of secretPlaces)
      t.ok(
        !within(secret, entry) && !within(entry, secret),
        `${entry} neither is, holds nor lies in ${secret}`,
      );
  }
  const cases: Record<string, [string, string[], boolean]> = {
    'a program': ['/usr/bin/curl', [], true],
    'an allowlisted file': ['/etc/passwd', [], true],
    'the password hashes': ['/etc/shadow', [], false],
    'a private TLS key': ['/etc/ssl/private/server.key', [], false],
    "a deployment's secret under /etc": ['/etc/clibroker/secrets/github.token.next', [], false],
    'a prefix of an entry is not the entry': ['/etc/passwd-', [], false],
    'a store under /var/lib': ['/var/lib/clibroker/store.db', [], false],
    'the same under readOnlyPaths': ['/var/lib/clibroker/store.db', ['/var/lib/clibroker'], true],
  };
  for (const [name, [path, ro, shown]] of Object.entries(cases))
    t.equal(visibleInSandbox(path, ro), shown, `${name}: ${path}`);
  // A readOnlyPaths entry that is a symlink: bwrap shows its target's files under the entry's name.
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-allowlist-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'deploy'));
  symlinkSync(join(dir, 'deploy'), join(dir, 'tool'));
  t.ok(
    visibleInSandbox(join(dir, 'deploy', 'secret'), [join(dir, 'tool')]),
    "a file under a symlinked entry's target is shown",
  );
  t.notOk(visibleInSandbox(join(dir, 'deploy', 'secret')), 'and not without that entry');
  t.notOk(inSystemDirs('/etc/clibroker/x'), 'an entrypoint under /etc is not in the system directories');
  t.ok(inSystemDirs('/usr/local/bin/gh'), '/usr/local/bin is');
  t.notOk(inSystemDirs('/usrx/bin/gh'), 'a name that only starts like one is not');
});

t.test(
  'isolated: an entrypoint symlinked from a system directory to a file outside them still runs',
  { skip },
  async (t) => {
    if (why !== undefined) return void t.fail(`bwrap does not work here: ${why}`);
    const id = randomBytes(6).toString('hex');
    const dir = join('/opt', `clibroker-allowlist-${id}`);
    const link = join('/usr/local/bin', `clibroker-allowlist-${id}`);
    mkdirSync(dir, { mode: 0o755 });
    t.teardown(() => {
      rmSync(link, { force: true });
      rmSync(dir, { recursive: true, force: true });
    });
    writeFileSync(join(dir, 'tool'), '#!/bin/sh\necho tool-ran\n', { mode: 0o755 });
    writeFileSync(join(dir, 'beside'), 'not bound');
    symlinkSync(join(dir, 'tool'), link);
    const r = await runSandboxed(opts(link, [], { image: 'isolated' }));
    t.equal(r.stdout, 'tool-ran\n', `the link's target is bound (${r.stderr.trim()})`);
    const beside = await runSandboxed(opts('cat', [join(dir, 'beside')], { image: 'isolated' }));
    t.notMatch(beside.stdout, 'not bound', 'only that file: its directory stays hidden');
  },
);
