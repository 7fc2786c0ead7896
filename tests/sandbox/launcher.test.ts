/**
 * What the isolated profile's launchers hand the CLI, checked in every profile and with each
 * launcher (perl, and node as on a host without perl; plain is the control: node's spawn does
 * the same there): the environment exactly (a NUL byte cannot smuggle in another variable),
 * exec failures inside the sandbox as CLI_SPAWN_FAILED with the errno's name, no descriptor of
 * the launcher's own nor one clibroker inherited, and an upload through the bridge delivered
 * byte for byte.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { buildChildEnv } from '../../src/credentials/child-env.js';
import { runSandboxed } from '../../src/sandbox/index.js';
import { isolatedLauncher, PERL } from '../../src/sandbox/isolated.js';
import { isolatedSkip } from '../helpers/bwrap.js';
import { startUpstream } from '../helpers/upstream.js';
import { FAKE_SESSION, NO_PERL, opts, sh, type Variant, variants } from './helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'clibroker-sbx-launcher-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

const all = await variants();
const isolated = all.filter((v) => v.profile === 'isolated');
const plain = all[0]!;

t.test(
  'the probe picks node where perl does not run, and says so',
  { skip: await isolatedSkip() },
  async (t) => {
    const choice = await isolatedLauncher(undefined, NO_PERL);
    t.match(choice.launcher, { kind: 'node', interpreter: process.execPath });
    t.equal(await isolatedLauncher(undefined, NO_PERL), choice, 'picked once: the same answer again');
  },
);

for (const v of isolated) {
  t.test(`${v.name}: the CLI is started by the ${v.launcher} launcher`, async (t) => {
    const r = await runSandboxed(sh('readlink /proc/$PPID/exe', [], v.more));
    t.equal(r.profile, 'isolated');
    t.equal(r.stdout.trim(), realpathSync(v.launcher === 'perl' ? PERL : process.execPath), r.stderr);
  });
}

for (const { name, more } of all) {
  t.test(`${name}: a NUL byte in an env value is refused, not split into another variable`, async (t) => {
    const err = await runSandboxed({
      ...sh('echo "[$INJECTED]"', [], more),
      childEnv: { cli: { env: { NOTE: 'x\u0000INJECTED=1' } } },
    }).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_SPAWN_FAILED' });
  });

  t.test(`${name}: env values reach the CLI exactly (=, newlines, empty, UTF-8)`, async (t) => {
    const env = { A_EQ: 'a=b=c', A_NL: 'line1\nline2', A_EMPTY: '', A_UTF8: 'grüße ✓' };
    const r = await runSandboxed({
      ...opts(
        'node',
        [
          '-e',
          'const o={};for(const k of Object.keys(process.env).sort())if(k.startsWith("A_"))o[k]=process.env[k];console.log(JSON.stringify(o))',
        ],
        more,
      ),
      childEnv: { cli: { env } },
    });
    t.equal(r.exitCode, 0, r.stderr);
    t.same(JSON.parse(r.stdout), env);
  });

  t.test(`${name}: an exec that fails inside is CLI_SPAWN_FAILED with the errno's name`, async (t) => {
    // Executable, so the entrypoint check passes; its interpreter does not exist, so exec fails.
    const script = join(scratch, `bad-interpreter-${name.replace(/\W+/g, '-')}`);
    writeFileSync(script, '#!/nonexistent/clibroker-interpreter\n');
    chmodSync(script, 0o755);
    const err = await runSandboxed(opts(script, [], more)).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_SPAWN_FAILED', details: { errno: 'ENOENT' } });
  });
}

for (const v of isolated) {
  t.test(
    `${v.name}: the CLI's environment is exactly the one built for it (the launcher adds nothing)`,
    async (t) => {
      // Compared with buildChildEnv, not with plain: under tap, plain's spawn gets tap's own
      // variables added by its spawn wrapper (the reason the env travels on fd 3).
      const r = await runSandboxed(opts('/usr/bin/env', ['-0'], v.more));
      const got = new Map(
        r.stdout
          .split('\0')
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
      );
      const home = got.get('HOME') ?? '';
      const root = dirname(home);
      const want = buildChildEnv({
        cli: {},
        proxyUrl: FAKE_SESSION.proxyUrl,
        caFile: join(root, 'certs', 'ca.pem'),
        certDir: join(root, 'certs'),
        home,
        tmpdir: join(root, 'tmp'),
      });
      t.match(home, /clibroker-sbx-/, "control: the call's HOME is there");
      t.same(Object.fromEntries([...got].sort()), Object.fromEntries(Object.entries(want).sort()));
    },
  );
}

/** The CLI's descriptors above 2, as `<fd> <kind>` (socket, pipe or the path; inode numbers dropped). */
async function extraFds(v: Variant): Promise<string[]> {
  const r = await runSandboxed(sh('ls -l /proc/$$/fd', [], v.more));
  const out: string[] = [];
  for (const m of r.stdout.matchAll(/ (\d+) -> (\S+)/g)) {
    if (Number(m[1]) > 2) out.push(`${m[1]} ${m[2]!.replace(/:\[\d+\]$/, '')}`);
  }
  return out.sort();
}

for (const v of isolated) {
  t.test(
    `${v.name}: the CLI gets no descriptor of the launcher's (listener, relay, env or exec pipe)`,
    async (t) => {
      // Whatever the test runner left open without close-on-exec reaches the CLI in plain
      // too (node's spawn passes it on): that is the control, the launcher must add nothing.
      const inPlain = await extraFds(plain);
      const inIsolated = await extraFds(v);
      t.same(
        inIsolated.filter((fd) => !inPlain.includes(fd)),
        [],
        `isolated ${JSON.stringify(inIsolated)}, plain ${JSON.stringify(inPlain)}`,
      );
    },
  );
}

/**
 * What the fd-parent fixture sees when its clibroker was started with a socket open as fd 40:
 * the CLI's own descriptor numbers, and which processes visible to the CLI hold that socket
 * (by its identity, `socket:[inode]`, so a renumbered copy counts too). node marks inherited
 * descriptors close-on-exec at start, but only from 0 up to the first gap above 15: one higher
 * up (as here, or fd 251 in some shells' children) stays open.
 */
async function underInheritedSocket(
  v: Variant,
): Promise<{ inherited: string; self: number[]; parent: string; listed: Set<string>; holders: Set<string> }> {
  const parent = fileURLToPath(new URL('./fixtures/fd-parent.ts', import.meta.url));
  // stdio index 40 'pipe': the fixture starts with a socketpair end on fd 40.
  const stdio = Array.from({ length: 41 }, (_, i) =>
    i === 1 || i === 40 ? 'pipe' : i === 2 ? 'inherit' : 'ignore',
  );
  const child = spawn(
    process.execPath,
    ['--import=tsx', parent, v.profile, ...(v.more.perl ? [v.more.perl] : [])],
    { stdio: stdio as never },
  );
  let out = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  await new Promise((r) => child.on('close', r));
  const { inherited, result } = JSON.parse(out) as { inherited: string; result: { stdout: string } };
  let self: number[] = [];
  let parentPid = '';
  let dir = '';
  const listed = new Set<string>();
  const holders = new Set<string>();
  for (const line of result.stdout.split('\n')) {
    const selfLine = /^self (.*)$/.exec(line);
    const parentLine = /^parent (\d+)$/.exec(line);
    const dirLine = /^dir \/proc\/(\d+)\/fd$/.exec(line);
    const fdLine = / \d+ -> (.+)$/.exec(line);
    if (selfLine) self = selfLine[1]!.split(/\s+/).filter(Boolean).map(Number);
    else if (parentLine) parentPid = parentLine[1]!;
    else if (dirLine) dir = dirLine[1]!;
    else if (fdLine) {
      listed.add(dir);
      if (fdLine[1] === inherited) holders.add(dir);
    }
  }
  return { inherited, self: self.sort((a, b) => a - b), parent: parentPid, listed, holders };
}

t.test('plain: a descriptor clibroker inherited reaches the CLI (the control)', async (t) => {
  const p = await underInheritedSocket(plain);
  t.match(p.inherited, /^socket:\[\d+\]$/, 'the fixture has its socket on fd 40');
  t.ok(p.self.includes(40), "plain's CLI has fd 40");
  t.ok(p.holders.size >= 2, 'and the scan finds the socket (in the CLI and in its clibroker)');
});

for (const v of isolated) {
  t.test(`${v.name}: a descriptor clibroker inherited reaches no process in the sandbox`, async (t) => {
    const r = await underInheritedSocket(v);
    t.match(r.inherited, /^socket:\[\d+\]$/, 'the fixture has its socket on fd 40');
    t.notOk(r.self.includes(40), 'the CLI has no fd 40');
    t.ok(r.listed.has(r.parent), `the scan read the launcher's descriptors (pid ${r.parent})`);
    t.same([...r.holders], [], 'no process in the sandbox holds the socket');
  });
}

/**
 * A node outside the system directories (an nvm or tarball install): a hard link of this one,
 * or a copy where the scratch directory is on another file system.
 */
function nodeElsewhere(): string {
  const tree = join(scratch, 'node-tree');
  mkdirSync(join(tree, 'bin'), { recursive: true });
  const node = join(tree, 'bin', 'node');
  try {
    linkSync(process.execPath, node);
  } catch {
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
  }
  return node;
}

const nodeRows = isolated.some((v) => v.launcher === 'node');

t.test(
  'isolated (node): a node outside the system directories runs the launcher (its tree is bound read-only)',
  // without node rows, variants() has already failed the file (CI) or recorded why they are skipped
  { skip: nodeRows ? false : 'the node launcher does not run here (see the skip recorded above)' },
  async (t) => {
    const node = nodeElsewhere();
    const fixture = fileURLToPath(new URL('./fixtures/run-isolated.ts', import.meta.url));
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(node, ['--import=tsx', fixture, NO_PERL, 'readlink /proc/$PPID/exe'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let text = '';
      child.stdout.on('data', (c: Buffer) => {
        text += c.toString();
      });
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    const { choice, result } = JSON.parse(out) as {
      choice: { launcher?: { kind: string; readOnly: string[] } };
      result: { exitCode: number; stdout: string; stderr: string };
    };
    t.match(choice.launcher, { kind: 'node', readOnly: [dirname(dirname(node))] }, 'its tree is to be bound');
    t.equal(result.exitCode, 0, result.stderr);
    t.equal(result.stdout.trim(), node, 'the CLI was started by that node');
  },
);

t.test('an upload through the broker arrives byte for byte in every profile', async (t) => {
  const upstream = await startUpstream(['api.example.com']);
  const broker = await createBroker({
    upstream: { ca: upstream.pki.caPem, resolve: upstream.resolve, allowAddresses: ['127.0.0.0/8'] },
  });
  t.teardown(async () => {
    await broker.close();
    await upstream.close();
  });
  const body = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < body.length; i++) body[i] = (i * 7919) & 0xff;
  const file = join(scratch, 'upload.bin');
  writeFileSync(file, body);
  const sha = createHash('sha256').update(body).digest('hex');
  for (const { name, more } of all) {
    const session = broker.openSession({ egress: ['api.example.com'], tier: 'write' });
    const r = await runSandboxed({
      ...opts('curl', [
        '--silent',
        '--show-error',
        '--max-time',
        '20',
        '--data-binary',
        `@${file}`,
        'https://api.example.com/up',
      ]),
      ...more,
      session,
      readOnlyPaths: [scratch],
    });
    session.close();
    t.equal(r.exitCode, 0, `${name}: ${r.stderr}`);
    t.match(JSON.parse(r.stdout), { method: 'POST', url: '/up' }, `${name}: the upstream answered`);
    t.match(upstream.received.at(-1), { bodyBytes: body.length, bodySha256: sha }, `${name}: the same bytes`);
  }
});

for (const v of isolated) {
  t.test(
    `${v.name}: the run directory is read-only to the CLI, and its status is not the CLI's to write`,
    async (t) => {
      // run/ sits beside HOME in the call's directory: the launcher and the relay socket are there
      const r = await runSandboxed(
        sh(
          'ls "$HOME/../run"; touch "$HOME/../run/x" 2>/dev/null && echo wrote; rm -f "$HOME/../run/broker.sock" 2>/dev/null && echo removed; ls /proc/self/fd | tr "\\n" " "; exit 3',
          [],
          v.more,
        ),
      );
      t.match(r.stdout, /broker\.sock/, 'the CLI can see the directory');
      t.notMatch(r.stdout, /wrote|removed/, 'and change nothing in it');
      t.notMatch(r.stdout, /status/, 'no status file: the status comes on a pipe');
      t.same([r.exitCode, r.signal], [3, null], "the CLI's own exit, reported by the launcher");
    },
  );
}
