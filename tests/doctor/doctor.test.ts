/**
 * `clibroker doctor` on a real deployment built as docs/config.md tells an operator: a daemon
 * user, an agents group and an agent user (real OS users, created as root), the configuration
 * and its secrets 0600 owned by the daemon user in 0700 directories, the store in its own 0700
 * directory, the socket directory 2750 daemon:agents under root-owned parents, a pinned
 * executable in a root-owned directory. Doctor passes it — as root with --user, as root
 * inferring the user from the configuration's owner, and as the daemon user — and then finds
 * each misconfiguration seeded into a fresh copy, with its code, exiting non-zero.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import type { OperatorConfig } from '../../src/config/types.js';
import { runDoctor } from '../../src/doctor/index.js';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { sha256File } from '../helpers/config.js';
import { testPki } from '../helpers/pki.js';
import { asUser, createGroup, createUser, type OsUser, requireRoot } from '../helpers/os-users.js';
import { ghExtension } from '../manifest/fixtures.js';

// the helper's test shape, from tap's: skipping is a plan of 0 with the reason
const helperT = {
  teardown: (fn: () => void | Promise<void>) => t.teardown(fn),
  fail: (m: string) => void t.fail(m),
  skip: (m: string) => void t.plan(0, m),
  plan: (n: number, c?: string) => void t.plan(n, c),
};
if (!requireRoot(helperT)) process.exit(0);

const PATH = '/usr/local/bin:/usr/bin:/bin';
const agents = createGroup(helperT, 'cbtcg');
const daemon = createUser(helperT, 'cbtcd');
const agent = createUser(helperT, 'cbtca', [agents.name]);

const { bin } = await buildBinary();
const binDir = dirname(dirname(bin));
// the built program must be readable by the daemon user, as an installed one is
spawnSync('chmod', ['-R', 'a+rX', binDir]);
t.teardown(() => rmSync(binDir, { recursive: true, force: true }));

interface Deployment {
  base: string;
  etc: string;
  secrets: string;
  configFile: string;
  ghToken: string;
  execToken: string;
  exe: string;
  socketDir: string;
  config: OperatorConfig;
  write(): void;
}

const own = (p: string, u: Pick<OsUser, 'uid' | 'gid'>, mode: number) => {
  chownSync(p, u.uid, u.gid);
  chmodSync(p, mode);
};

/** A fresh deployment that doctor finds nothing wrong with. */
function deployment(): Deployment {
  const base = mkdtempSync('/tmp/cbtc-doctor-');
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  chmodSync(base, 0o755);
  const etc = join(base, 'etc');
  const secrets = join(etc, 'secrets');
  const extensions = join(etc, 'extensions');
  for (const d of [etc, secrets, extensions]) {
    mkdirSync(d);
    own(d, daemon, 0o700);
  }
  const secret = (name: string, value: string) => {
    const p = join(secrets, name);
    writeFileSync(p, `${value}\n`);
    own(p, daemon, 0o600);
    return p;
  };
  const ghToken = `ghp_Doc${randomBytes(16).toString('hex')}`;
  const execToken = randomBytes(32).toString('hex');
  secret('gh.token', ghToken);
  secret('executor.token', execToken);

  // the pinned program: a root-owned copy, in a root-owned directory
  const binDir = join(base, 'bin');
  mkdirSync(binDir, { mode: 0o755 });
  chmodSync(binDir, 0o755);
  const exe = join(binDir, 'gh');
  copyFileSync('/usr/bin/true', exe);
  chmodSync(exe, 0o755);

  const manifest = ghExtension();
  manifest.clis[0]!.binary.entrypoint = 'gh';
  const manifestFile = join(extensions, 'github.json');
  writeFileSync(manifestFile, JSON.stringify(manifest));
  own(manifestFile, daemon, 0o600);

  const varDir = join(base, 'var');
  mkdirSync(varDir);
  own(varDir, daemon, 0o700);
  // the socket: root-owned parents, its own directory 2750 daemon:agents
  const sockParent = join(base, 'run');
  mkdirSync(sockParent, { mode: 0o755 });
  chmodSync(sockParent, 0o755);
  const socketDir = join(sockParent, 'clibroker');
  mkdirSync(socketDir);
  chownSync(socketDir, daemon.uid, agents.gid);
  chmodSync(socketDir, 0o2750);

  const configFile = join(etc, 'config.json');
  const config: OperatorConfig = {
    version: 1,
    // the conformance gate has its own tests; these are about something else
    conformance: 'optional',
    organization: { ceiling: 'write' },
    images: { gh: { executable: exe, sha256: sha256File(exe), profile: 'isolated' } },
    extensions: {
      github: {
        manifest: 'extensions/github.json',
        sha256: sha256File(manifestFile),
        connection: { kind: 'oauth_access_token', accessToken: { file: 'secrets/gh.token' } },
        endpoint: 'https://ghe.acme.example',
      },
    },
    store: join(varDir, 'store.db'),
    daemon: {
      socket: join(socketDir, 'broker.sock'),
      socketMode: '0660',
      executorToken: { file: 'secrets/executor.token' },
    },
  };
  const d: Deployment = {
    base,
    etc,
    secrets,
    configFile,
    ghToken,
    execToken,
    exe,
    socketDir,
    config,
    write() {
      writeFileSync(configFile, JSON.stringify(config, null, 2));
      own(configFile, daemon, 0o600);
    },
  };
  d.write();
  return d;
}

/** The binary as root, or as another user (through setpriv, with a clean environment). */
function doctorBin(args: string[], as?: OsUser) {
  const argv = [...(as ? asUser(as) : []), process.execPath, bin, 'doctor', ...args];
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 60_000, env: { PATH } });
  let env:
    | {
        success: boolean;
        data?: Record<string, unknown>;
        error?: { code: string; details?: { problems?: { code: string; path: string; message: string }[] } };
      }
    | undefined;
  try {
    env = JSON.parse(r.stdout);
  } catch {
    env = undefined;
  }
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, env };
}

const codes = (ps: readonly { code: string }[]) => ps.map((p) => p.code);
const noSecret = (tt: Test, d: Deployment, text: string) => {
  for (const s of [d.ghToken, d.execToken]) tt.notOk(text.includes(s), 'no secret in the output');
};

t.test(
  'a deployment built as the docs say: doctor finds nothing, as root and as the daemon user',
  async (t) => {
    const d = deployment();
    const r = await runDoctor({ config: d.configFile, user: daemon.name });
    t.same(r.problems, [], 'no problem');
    t.match(r, {
      daemonUser: { name: daemon.name, uid: daemon.uid },
      ranAs: 'root',
      checked: {
        secrets: 2,
        manifests: 1,
        isolatedImages: 1,
        tokens: 1,
        sandbox: 'usable',
        besideSecrets: 0,
      },
    });

    const asRoot = doctorBin(['--config', d.configFile, '--user', daemon.name]);
    t.equal(asRoot.code, 0, asRoot.stdout + asRoot.stderr);
    t.match(asRoot.env, { success: true, data: { healthy: true, ranAs: 'root' } });

    const inferred = doctorBin(['--config', d.configFile]);
    t.equal(inferred.code, 0, inferred.stdout);
    t.match(inferred.env, { data: { daemonUser: { name: daemon.name } } }, "the configuration's owner");

    const asDaemon = doctorBin(['--config', d.configFile], daemon);
    t.equal(asDaemon.code, 0, asDaemon.stdout + asDaemon.stderr);
    t.match(asDaemon.env, {
      success: true,
      data: { healthy: true, ranAs: 'daemon-user', checked: { tokens: 1 } },
    });
    for (const r of [asRoot, inferred, asDaemon]) noSecret(t, d, r.stdout + r.stderr);
  },
);

t.test('a CLI the configuration withholds is reported, not a problem of the deployment', async (t) => {
  const d = deployment();
  const config = JSON.parse(readFileSync(d.configFile, 'utf8'));
  // several egress hosts, no credentialHosts and no endpoint: every call would be refused
  delete config.extensions.github.endpoint;
  writeFileSync(d.configFile, JSON.stringify(config));
  const r = await runDoctor({ config: d.configFile, user: daemon.name });
  t.same(r.problems, [], 'the deployment is sound');
  t.match(r.withheld, [
    {
      id: 'github:cli:gh',
      name: 'gh_cli',
      code: 'CONFIG_CLI_NOT_RUNNABLE',
      message: /CREDENTIAL_HOSTS_REQUIRED/,
    },
  ]);
  const out = doctorBin(['--config', d.configFile, '--user', daemon.name]);
  t.equal(out.code, 0, out.stdout + out.stderr);
  t.match(out.env, {
    success: true,
    data: { healthy: true, withheld: [{ code: 'CONFIG_CLI_NOT_RUNNABLE' }] },
  });
});

/** Seed one misconfiguration into a fresh deployment and expect each problem in `want`. */
async function seeded(
  tt: Test,
  seed: (d: Deployment) => void,
  want: { code: string; path?: string | RegExp; message?: RegExp }[],
  opts: { user?: string; bwrap?: string } = {},
) {
  const d = deployment();
  seed(d);
  // an empty user: none named, so doctor infers it from the configuration's owner
  const user = opts.user === '' ? undefined : (opts.user ?? daemon.name);
  const r = await runDoctor({
    config: d.configFile,
    ...(user !== undefined ? { user } : {}),
    ...(opts.bwrap ? { bwrap: opts.bwrap } : {}),
  });
  for (const w of want)
    tt.ok(
      r.problems.some(
        (p) =>
          p.code === w.code &&
          (w.path === undefined || (typeof w.path === 'string' ? p.path === w.path : w.path.test(p.path))) &&
          (w.message === undefined || w.message.test(p.message)),
      ),
      `${w.code} at ${String(w.path ?? '(any)')}; found ${JSON.stringify(codes(r.problems))}`,
    );
  noSecret(tt, d, JSON.stringify(r));
  return { d, r };
}

t.test('a secret readable by every user (0644)', async (t) => {
  const { r } = await seeded(t, (d) => chmodSync(join(d.secrets, 'gh.token'), 0o644), [
    { code: 'DEPLOY_FILE_EXPOSED', path: /secrets\/gh\.token$/, message: /mode 0644: every user may read/ },
    { code: 'CONFIG_SECRET_FILE_MODE', path: 'extensions.github.connection.accessToken' },
  ]);
  t.equal(codes(r.problems).filter((c) => c === 'DEPLOY_FILE_EXPOSED').length, 1, 'that file only');
});

t.test('a secret owned by another user (the agent)', async (t) => {
  await seeded(t, (d) => chownSync(join(d.secrets, 'executor.token'), agent.uid, agent.gid), [
    {
      code: 'DEPLOY_FILE_EXPOSED',
      path: /executor\.token$/,
      message: new RegExp(`owned by uid ${agent.uid}`),
    },
    { code: 'CONFIG_SECRET_MISSING', path: 'daemon.executorToken', message: /could not read/ },
  ]);
});

t.test('a secrets directory every user can list (0755)', async (t) => {
  await seeded(t, (d) => chmodSync(d.secrets, 0o755), [
    { code: 'DEPLOY_DIR_EXPOSED', path: /\/etc\/secrets$/, message: /every user may list it/ },
  ]);
});

t.test('a file beside a secret (a rotated copy left 0644)', async (t) => {
  const { r } = await seeded(
    t,
    (d) => {
      const p = join(d.secrets, 'executor.token.next');
      writeFileSync(p, `${randomBytes(32).toString('hex')}\n`);
      own(p, daemon, 0o644);
    },
    [{ code: 'DEPLOY_FILE_EXPOSED', path: /executor\.token\.next$/, message: /beside a secret/ }],
  );
  t.equal(r.checked.besideSecrets, 1);
});

t.test('a configuration directory the agents group can write', async (t) => {
  await seeded(
    t,
    (d) => {
      chownSync(d.etc, daemon.uid, agents.gid);
      chmodSync(d.etc, 0o770);
    },
    [{ code: 'DEPLOY_DIR_EXPOSED', path: /\/etc$/, message: /group or other may write it/ }],
  );
});

t.test("secrets under a path the sandbox shows (an image's readOnlyPaths)", async (t) => {
  await seeded(
    t,
    (d) => {
      d.config.images['gh']!.readOnlyPaths = [d.secrets];
      d.write();
    },
    [
      { code: 'DEPLOY_SANDBOX_SHOWS', path: /secrets\/gh\.token$/, message: /image gh/ },
      { code: 'DEPLOY_SANDBOX_SHOWS', path: /secrets\/executor\.token$/ },
    ],
  );
});

t.test('a socket directory every user can write (0777)', async (t) => {
  const { r } = await seeded(t, (d) => chmodSync(d.socketDir, 0o777), [
    { code: 'DEPLOY_SOCKET_DIR_UNSAFE', path: /\/run\/clibroker$/, message: /mode 0777/ },
  ]);
  t.same(
    codes(r.problems),
    ['DEPLOY_SOCKET_DIR_UNSAFE'],
    "once: not again as the loader's CONFIG_FIELD_INVALID",
  );
});

t.test("a socket directory's parent writable by all and not sticky (0777)", async (t) => {
  await seeded(t, (d) => chmodSync(dirname(d.socketDir), 0o777), [
    { code: 'DEPLOY_SOCKET_DIR_UNSAFE', path: /\/run$/ },
  ]);
});

t.test('an upstream CA file the agents group can write', async (t) => {
  const caFor = (d: Deployment, mode: number, gid: number) => {
    const ca = join(d.etc, 'vendor-ca.pem');
    writeFileSync(ca, testPki().caPem);
    chownSync(ca, 0, gid);
    chmodSync(ca, mode);
    d.config.upstream = { caFile: ca };
    d.write();
  };
  // readable by all is fine for a CA: only who may change it matters
  const fine = deployment();
  caFor(fine, 0o644, 0);
  t.same(
    (await runDoctor({ config: fine.configFile, user: daemon.name })).problems,
    [],
    'a root-owned 0644 CA',
  );
  await seeded(t, (d) => caFor(d, 0o664, agents.gid), [
    { code: 'DEPLOY_FILE_EXPOSED', path: /vendor-ca\.pem$/, message: /add a CA the broker then trusts/ },
  ]);
});

t.test('a weak executor token', async (t) => {
  const { r } = await seeded(
    t,
    (d) => writeFileSync(join(d.secrets, 'executor.token'), 'changeme-please\n'),
    [{ code: 'CONFIG_SECRET_WEAK', path: 'daemon.executorToken', message: /bits/ }],
  );
  t.notOk(JSON.stringify(r).includes('changeme'), 'the weak token is not shown either');
});

t.test('a pinned executable changed after it was pinned', async (t) => {
  await seeded(t, (d) => appendFileSync(d.exe, 'tampered'), [
    { code: 'CONFIG_IMAGE_HASH_MISMATCH', path: 'images.gh.sha256' },
  ]);
});

t.test('root as the daemon user, named or inferred', async (t) => {
  await seeded(t, () => {}, [{ code: 'DEPLOY_DAEMON_USER', message: /would run as root/ }], { user: 'root' });
  await seeded(
    t,
    (d) => chownSync(d.configFile, 0, 0),
    [{ code: 'DEPLOY_DAEMON_USER', message: /owned by root; name the user/ }],
    { user: '' },
  );
});

t.test('bubblewrap that does not run as the daemon user', async (t) => {
  let fake = '';
  const { r } = await seeded(
    t,
    (d) => {
      fake = join(d.base, 'bin', 'bwrap');
      writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
      chmodSync(fake, 0o755);
    },
    [{ code: 'DEPLOY_SANDBOX_UNAVAILABLE', message: /No permissions to create new namespace/ }],
    {
      get bwrap() {
        return fake;
      },
    },
  );
  t.equal(r.checked.sandbox, 'unusable');
});

t.test(
  'the command: exit 1 with DEPLOYMENT_UNSAFE and every problem, as root and as the daemon user',
  async (t) => {
    const d = deployment();
    chmodSync(join(d.secrets, 'gh.token'), 0o640);
    chownSync(join(d.secrets, 'gh.token'), daemon.uid, agents.gid);
    chmodSync(d.socketDir, 0o777);
    for (const as of [undefined, daemon]) {
      const r = doctorBin(['--config', d.configFile, '--user', daemon.name], as);
      t.equal(r.code, 1, r.stdout + r.stderr);
      t.match(r.env, { success: false, error: { code: 'DEPLOYMENT_UNSAFE' } });
      const found = r.env?.error?.details?.problems ?? [];
      for (const c of ['DEPLOY_FILE_EXPOSED', 'DEPLOY_SOCKET_DIR_UNSAFE', 'CONFIG_SECRET_FILE_MODE'])
        t.ok(codes(found).includes(c), `${c} (${as ? 'as the daemon user' : 'as root'})`);
      noSecret(t, d, r.stdout + r.stderr);
    }
  },
);

t.test("a token in a variable: as root it is the daemon's environment, said unchecked", async (t) => {
  const d = deployment();
  d.config.daemon!.executorToken = { env: 'CBTC_EXEC_TOKEN' };
  d.write();
  const r = await runDoctor({ config: d.configFile, user: daemon.name, env: {} });
  t.same(r.problems, [], "not CONFIG_SECRET_MISSING: root cannot see the daemon's environment");
  t.match(r.notChecked, [
    { what: 'daemon.executorToken', why: /CBTC_EXEC_TOKEN .*checked only when doctor runs as/ },
  ]);
  t.equal(r.checked.tokens, 0);
  const asDaemon = doctorBin(['--config', d.configFile], daemon);
  t.equal(asDaemon.code, 1, 'as the daemon user without the variable: missing');
  t.match(asDaemon.env, {
    error: { details: { problems: [{ code: 'CONFIG_SECRET_MISSING', path: 'daemon.executorToken' }] } },
  });
});

t.test('an operator command: agents are not offered doctor', async (t) => {
  const r = spawnSync(process.execPath, [bin, 'agent', 'manifest', '--format', 'anthropic'], {
    encoding: 'utf8',
    env: { PATH },
  });
  const names = (JSON.parse(r.stdout).data as { name: string }[]).map((x) => x.name);
  t.ok(names.includes('run'), 'the list is real');
  t.notOk(names.includes('doctor'));
});
