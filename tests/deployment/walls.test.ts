/**
 * The walls, tried as an agent with a shell would, on a deployment built as docs/config.md
 * tells an operator: a daemon user, an agents group and an agent user (real OS users,
 * created here as root), the configuration and its secrets at 0600 owned by the daemon user
 * in 0700 directories, the store in its own 0700 directory, the socket directory 2750
 * daemon:agents, the real `clibroker daemon` run as the daemon user, and the agent's
 * `clibroker run` run as the agent user.
 *
 * Secret files the daemon's user can read are planted all over the host (beside the
 * configuration's secrets, and under /var/lib, /run, /home, /root, /srv, /opt and /tmp); the
 * agent tries each through the CLI's own arguments — curl `file://`, `-d @file`, `-K file`
 * and gh `api --input file` — and never gets a byte of them, while the same tools do reach
 * the vendor and an allowed system file, so the test can fail.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import type { OperatorConfig } from '../../src/config/types.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { sha256File } from '../helpers/config.js';
import { github, runBinary } from '../daemon/helpers.js';
import { asUser, createGroup, createUser, type OsUser, requireRoot } from '../helpers/os-users.js';

if (!requireRoot(t)) process.exit(0);

const GH_TOKEN = `ghp_Walls${randomBytes(16).toString('hex')}`;
const EXEC_TOKEN = randomBytes(32).toString('hex');
const PATH = '/usr/local/bin:/usr/bin:/bin';
const tag = randomBytes(4).toString('hex');

// ── the deployment ──────────────────────────────────────────────────────────
const agents = createGroup(t, 'cbtwg');
const daemonUser = createUser(t, 'cbtwd');
const agent = createUser(t, 'cbtwa', [agents.name]);

const { bin } = await buildBinary();
const binDir = dirname(dirname(bin));
// the built package must be readable by the users who run it, as an installed one is
chmodSync(binDir, 0o755);
t.teardown(() => rmSync(binDir, { recursive: true, force: true }));

/** A directory owned by `owner` (root:root when absent) with `mode`, removed at teardown. */
function dir(path: string, mode: number, owner?: OsUser, gid?: number): string {
  mkdirSync(path, { recursive: true });
  chownSync(path, owner?.uid ?? 0, gid ?? owner?.gid ?? 0);
  chmodSync(path, mode);
  return path;
}
/** A file owned by `owner` with `mode`. */
function file(path: string, content: string, mode: number, owner?: OsUser): string {
  writeFileSync(path, content);
  chownSync(path, owner?.uid ?? 0, owner?.gid ?? 0);
  chmodSync(path, mode);
  return path;
}

const etc = dir(`/etc/cbtw-${tag}`, 0o750, undefined, daemonUser.gid);
const secrets = dir(join(etc, 'secrets'), 0o700, daemonUser);
const lib = dir(`/var/lib/cbtw-${tag}`, 0o700, daemonUser);
const run = dir(`/run/cbtw-${tag}`, 0o2750, daemonUser, agents.gid);
t.teardown(() => {
  for (const p of [etc, lib, run]) rmSync(p, { recursive: true, force: true });
});

const vendor = await startMockVendor(githubVendor({ token: GH_TOKEN }));
t.teardown(() => vendor.close());

const manifestFile = file(
  join(etc, 'github.json'),
  `${JSON.stringify(github, null, 2)}\n`,
  0o640,
  daemonUser,
);
const config: OperatorConfig = {
  version: 1,
  // the conformance gate has its own tests; the walls are about something else
  conformance: 'optional',
  organization: { ceiling: 'write' },
  images: {
    gh: { executable: '/usr/bin/gh', sha256: sha256File('/usr/bin/gh'), profile: 'isolated' },
    curl: { executable: '/usr/bin/curl', sha256: sha256File('/usr/bin/curl'), profile: 'isolated' },
  },
  extensions: {
    github: {
      manifest: manifestFile,
      sha256: sha256File(manifestFile),
      connection: {
        kind: 'oauth_access_token',
        accessToken: { file: file(join(secrets, 'github.token'), GH_TOKEN, 0o600, daemonUser) },
      },
    },
  },
  store: join(lib, 'store.db'),
  deadlineSeconds: 60,
  daemon: {
    socket: join(run, 'broker.sock'),
    socketMode: '0660',
    cliTier: 'write',
    executorToken: { file: file(join(secrets, 'executor.token'), EXEC_TOKEN, 0o600, daemonUser) },
  },
  upstream: {
    connectTo: { 'api.github.com': `127.0.0.1:${vendor.port}` },
    caFile: file(join(etc, 'vendor-ca.pem'), vendor.caPem, 0o640, daemonUser),
    allowAddresses: ['127.0.0.0/8'],
  },
};
const configFile = file(join(etc, 'config.json'), `${JSON.stringify(config, null, 2)}\n`, 0o600, daemonUser);

/** Run the built binary as `user` with exactly `env` (and PATH). */
const clibroker = (user: OsUser, args: string[], env: Record<string, string> = {}) =>
  runBinary(bin, args, { PATH, ...env }, '', asUser(user));

// the operator allows writes for each tool, so a body the agent sends would really reach the vendor
for (const cli of ['gh', 'curl']) {
  const allowed = await clibroker(daemonUser, [
    'tiers',
    'set',
    '--config',
    configFile,
    '--extension',
    'github',
    '--cli',
    cli,
    '--tier',
    'write',
    '--by',
    'operator@example.com',
  ]);
  // no assertion at the top level: tap would end the root test (and run its teardowns) before the subtests
  if (allowed.code !== 0)
    throw new Error(`the operator could not allow writes for ${cli}: ${allowed.stdout}${allowed.stderr}`);
}

/** Start the daemon as its user; resolves once it listens. */
function startDaemon(): Promise<{ child: ChildProcess; out: () => string; err: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      asUser(daemonUser)[0]!,
      [...asUser(daemonUser).slice(1), process.execPath, bin, 'daemon', '--config', configFile],
      { env: { PATH }, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stderr!.on('data', (c) => {
      err += c;
    });
    child.stdout!.on('data', (c) => {
      out += c;
      if (out.includes('\n') && out.includes('daemon.listening'))
        resolve({ child, out: () => out, err: () => err });
    });
    child.on('exit', (code) =>
      reject(new Error(`the daemon exited (${code}) before listening: ${out}${err}`)),
    );
  });
}
const daemon = await startDaemon();
const exited = new Promise<number | null>((resolve) => daemon.child.once('exit', (code) => resolve(code)));
// a fallback only: the last test stops it, so its user can be removed at teardown
t.teardown(() => {
  if (daemon.child.exitCode === null) daemon.child.kill('SIGKILL');
});

const asAgent = (args: string[]) =>
  clibroker(agent, args, {
    CLIBROKER_SOCKET: config.daemon!.socket,
    CLIBROKER_EXECUTOR_TOKEN: EXEC_TOKEN,
  });

// ── the planted secrets: readable by the daemon's user, never by the CLI it runs ──
const planted: { where: string; path: string; value: string }[] = [];
function plant(where: string, path: string): void {
  const value = `PLANTED-${where.replace(/\W/g, '')}-${randomBytes(12).toString('hex')}`;
  // its own directory, owned by the daemon user as an operator's would be
  const parent = dirname(path);
  if (parent !== secrets) {
    dir(parent, 0o700, daemonUser);
    t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  }
  file(path, value, 0o600, daemonUser);
  planted.push({ where, path, value });
}
plant('a staged rotation beside the secrets', join(secrets, 'github.token.next'));
plant('/var/lib', `/var/lib/cbtw-leak-${tag}/secret`);
plant('/run', `/run/cbtw-leak-${tag}/secret`);
plant('/home', `/home/cbtw-leak-${tag}/secret`);
plant('/root', `/root/cbtw-leak-${tag}/secret`);
plant('/srv', `/srv/cbtw-leak-${tag}/secret`);
plant('/opt', `/opt/cbtw-leak-${tag}/secret`);
plant('/tmp', `/tmp/cbtw-leak-${tag}/secret`);
plant('/etc elsewhere', `/etc/cbtw-leak-${tag}/secret`);

t.test('the deployment works: the agent runs gh and curl through the daemon', async (t) => {
  const gh = await asAgent(['run', 'gh_cli', '--', 'api', 'user']);
  t.match(gh.env, { success: true, data: { exitCode: 0 } }, gh.stdout + gh.stderr);
  t.match(gh.env?.data?.stdout, /octocat/);
  // an allowed system file is readable, so a refusal below is the wall and not a broken file:// path
  const passwd = await asAgent(['run', 'curl_cli', '--', '-sS', 'file:///etc/passwd']);
  t.match(
    passwd.env,
    { success: true, data: { exitCode: 0, stdout: /^root:/m } },
    passwd.stdout + passwd.stderr,
  );
});

t.test('the agent cannot read the configuration or its secrets itself', async (t) => {
  for (const p of [configFile, join(secrets, 'github.token'), join(lib, 'store.db')]) {
    let read = true;
    try {
      execFileSync(asUser(agent)[0]!, [...asUser(agent).slice(1), 'cat', p], { stdio: 'pipe' });
    } catch {
      read = false;
    }
    t.notOk(read, `${p} is closed to the agent`);
  }
});

t.test('no planted secret reaches the agent or the vendor through the CLI', async (t) => {
  const attempts = (path: string): { what: string; args: string[] }[] => [
    { what: 'curl file://', args: ['run', 'curl_cli', '--', '-sS', `file://${path}`] },
    {
      what: 'curl -d @file',
      args: [
        'run',
        'curl_cli',
        '--',
        '-sS',
        '-d',
        `@${path}`,
        'https://api.github.com/repos/acme/app/issues',
      ],
    },
    {
      what: 'curl -K file',
      args: ['run', 'curl_cli', '--', '-sS', '-K', path, 'https://api.github.com/user'],
    },
    {
      what: 'gh api --input file',
      args: ['run', 'gh_cli', '--', 'api', '-X', 'POST', 'repos/acme/app/issues', '--input', path],
    },
  ];
  for (const p of [
    ...planted,
    { where: 'the live token', path: join(secrets, 'github.token'), value: GH_TOKEN },
  ]) {
    for (const a of attempts(p.path)) {
      const before = vendor.log.length;
      const r = await asAgent(a.args);
      t.ok(
        r.env,
        `${a.what} on ${p.where}: an envelope came back (${r.stdout.slice(0, 200)}${r.stderr.slice(0, 200)})`,
      );
      t.notMatch(
        r.stdout + r.stderr,
        p.value,
        `${a.what} on ${p.where}: nothing of it in what the agent got`,
      );
      // (the live token is stamped on Authorization by the broker itself: that is its job)
      const sent = vendor.log.slice(before);
      t.notOk(
        sent.some(
          (v) =>
            v.body.toString('latin1').includes(p.value) ||
            JSON.stringify({ ...v.headers, authorization: undefined }).includes(p.value),
        ),
        `${a.what} on ${p.where}: nothing of it reached the vendor`,
      );
    }
  }
  // the write path was really open: a body the agent chose reached the vendor
  const posted = await asAgent([
    'run',
    'curl_cli',
    '--',
    '-sS',
    '-d',
    '{"title":"from the agent"}',
    'https://api.github.com/repos/acme/app/issues',
  ]);
  t.match(posted.env, { success: true }, posted.stdout + posted.stderr);
  t.ok(
    vendor.log.some((v) => v.body.toString().includes('from the agent')),
    'a body the agent wrote itself reaches the vendor, so the checks above can fail',
  );
});

t.test('nothing secret in the daemon log', async (t) => {
  for (const s of [GH_TOKEN, EXEC_TOKEN, ...planted.map((p) => p.value)])
    t.notMatch(daemon.out() + daemon.err(), s);
});

t.test('the daemon stops on SIGTERM and removes its socket', async (t) => {
  daemon.child.kill('SIGTERM');
  t.equal(await exited, 0);
  t.notOk(existsSync(config.daemon!.socket), 'the socket is gone');
});
