/**
 * What the isolated profile's launcher hands the CLI, checked in every profile (plain is the
 * control: node's spawn does the same there): the environment exactly (a NUL byte cannot
 * smuggle in another variable), exec failures inside the sandbox as CLI_SPAWN_FAILED with the
 * errno's name, no descriptor of the launcher's own, and an upload through the bridge
 * delivered byte for byte.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { buildChildEnv } from '../../src/credentials/child-env.js';
import { runSandboxed } from '../../src/sandbox/index.js';
import { startUpstream } from '../helpers/upstream.js';
import { FAKE_SESSION, opts, profiles, sh } from './helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'clibroker-sbx-launcher-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

for (const image of await profiles()) {
  t.test(`${image}: a NUL byte in an env value is refused, not split into another variable`, async (t) => {
    const err = await runSandboxed({
      ...sh('echo "[$INJECTED]"', [], { image }),
      childEnv: { cli: { env: { NOTE: 'x\u0000INJECTED=1' } } },
    }).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_SPAWN_FAILED' });
  });

  t.test(`${image}: env values reach the CLI exactly (=, newlines, empty, UTF-8)`, async (t) => {
    const env = { A_EQ: 'a=b=c', A_NL: 'line1\nline2', A_EMPTY: '', A_UTF8: 'grüße ✓' };
    const r = await runSandboxed({
      ...opts(
        'node',
        [
          '-e',
          'const o={};for(const k of Object.keys(process.env).sort())if(k.startsWith("A_"))o[k]=process.env[k];console.log(JSON.stringify(o))',
        ],
        { image },
      ),
      childEnv: { cli: { env } },
    });
    t.equal(r.exitCode, 0, r.stderr);
    t.same(JSON.parse(r.stdout), env);
  });

  t.test(`${image}: an exec that fails inside is CLI_SPAWN_FAILED with the errno's name`, async (t) => {
    // Executable, so the entrypoint check passes; its interpreter does not exist, so exec fails.
    const script = join(scratch, `bad-interpreter-${image}`);
    writeFileSync(script, '#!/nonexistent/clibroker-interpreter\n');
    chmodSync(script, 0o755);
    const err = await runSandboxed(opts(script, [], { image })).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_SPAWN_FAILED', details: { errno: 'ENOENT' } });
  });
}

t.test(
  "isolated: the CLI's environment is exactly the one built for it (the launcher adds nothing)",
  { skip: (await profiles()).includes('isolated') ? false : 'bwrap does not work here' },
  async (t) => {
    // Compared with buildChildEnv, not with plain: under tap, plain's spawn gets tap's own
    // variables added by its spawn wrapper (the reason the env travels on fd 3).
    const r = await runSandboxed(opts('/usr/bin/env', ['-0'], { image: 'isolated' }));
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
      caFile: join(root, 'ca.pem'),
      home,
      tmpdir: join(root, 'tmp'),
    });
    t.match(home, /clibroker-sbx-/, "control: the call's HOME is there");
    t.same(Object.fromEntries([...got].sort()), Object.fromEntries(Object.entries(want).sort()));
  },
);

/** The CLI's descriptors above 2, as `<fd> <kind>` (socket, pipe or the path; inode numbers dropped). */
async function extraFds(image: string): Promise<string[]> {
  const r = await runSandboxed(sh('ls -l /proc/$$/fd', [], { image }));
  const out: string[] = [];
  for (const m of r.stdout.matchAll(/ (\d+) -> (\S+)/g)) {
    if (Number(m[1]) > 2) out.push(`${m[1]} ${m[2]!.replace(/:\[\d+\]$/, '')}`);
  }
  return out.sort();
}

t.test(
  "isolated: the CLI gets no descriptor of the launcher's (listener, relay, env or exec pipe)",
  { skip: (await profiles()).includes('isolated') ? false : 'bwrap does not work here' },
  async (t) => {
    // Whatever the test runner left open without close-on-exec reaches the CLI in plain
    // too (node's spawn passes it on): that is the control, the launcher must add nothing.
    const plain = await extraFds('plain');
    const isolated = await extraFds('isolated');
    t.same(
      isolated.filter((fd) => !plain.includes(fd)),
      [],
      `isolated ${JSON.stringify(isolated)}, plain ${JSON.stringify(plain)}`,
    );
  },
);

/**
 * The CLI's descriptor numbers when its clibroker was started with a socket open as fd 40.
 * node marks inherited descriptors close-on-exec at start, but only from 0 up to the first
 * gap above 15: one higher up (as here, or fd 251 in some shells' children) stays open.
 */
async function fdsUnderInheritedSocket(image: string): Promise<number[]> {
  const parent = fileURLToPath(new URL('./fixtures/fd-parent.ts', import.meta.url));
  // stdio index 40 'pipe': the fixture starts with a socketpair end on fd 40.
  const stdio = Array.from({ length: 41 }, (_, i) =>
    i === 1 || i === 40 ? 'pipe' : i === 2 ? 'inherit' : 'ignore',
  );
  const child = spawn(process.execPath, ['--import=tsx', parent, image], { stdio: stdio as never });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  await new Promise((r) => child.on('close', r));
  const r = JSON.parse(out) as { stdout: string };
  return r.stdout
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
}

t.test(
  'isolated: a descriptor clibroker inherited does not reach the CLI (plain passes it on)',
  { skip: (await profiles()).includes('isolated') ? false : 'bwrap does not work here' },
  async (t) => {
    t.ok((await fdsUnderInheritedSocket('plain')).includes(40), "control: plain's CLI has fd 40");
    t.notOk((await fdsUnderInheritedSocket('isolated')).includes(40), "isolated's CLI has no fd 40");
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
  for (const image of await profiles()) {
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
      image,
      session,
      readOnlyPaths: [scratch],
    });
    session.close();
    t.equal(r.exitCode, 0, `${image}: ${r.stderr}`);
    t.match(JSON.parse(r.stdout), { method: 'POST', url: '/up' }, `${image}: the upstream answered`);
    t.match(
      upstream.received.at(-1),
      { bodyBytes: body.length, bodySha256: sha },
      `${image}: the same bytes`,
    );
  }
});
