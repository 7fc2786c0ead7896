/**
 * docs/sandbox.md / src/sandbox/dirs.ts: the per-call directory (`<tmp>/clibroker-sbx-XXXX/`,
 * the child's HOME, TMPDIR, CA file and run files) is removed whatever the call's end — also
 * when the preamble fails (CLI_PREAMBLE_FAILED, CLI_TIMEOUT in the preamble) and when the
 * program cannot be started (CLI_SPAWN_FAILED). Real processes, through runSandboxed and
 * through the runner; this process's TMPDIR points at a directory of its own, so every call
 * directory made here is in it and can be counted.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import type { Connection } from '../../src/credentials/types.js';
import { defineExtension } from '../../src/manifest/define.js';
import { runSandboxed } from '../../src/sandbox/index.js';
import { atWrite, runFixture } from '../runs/fixtures.js';
import { opts, sh, variants } from './helpers.js';

const own = mkdtempSync(join(tmpdir(), 'clibroker-calldir-test-'));
const scratch = mkdtempSync(join(tmpdir(), 'clibroker-calldir-scratch-'));
const before = process.env.TMPDIR;
// os.tmpdir() reads TMPDIR at every call: the sandbox makes its call directories here from now on
process.env.TMPDIR = own;
t.teardown(() => {
  if (before === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = before;
  rmSync(own, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

/** The call directories left in this process's TMPDIR. */
const callDirs = (): string[] => readdirSync(own).filter((n) => n.startsWith('clibroker-sbx-'));

/** Asserts no call directory is left, then clears any that is, so one failure does not spill into the next test. */
function noneLeft(t: Test, message = 'the call directory is gone'): void {
  const left = callDirs();
  t.same(left, [], message);
  for (const n of left) rmSync(join(own, n), { recursive: true, force: true });
}

/** Executable, so the entrypoint check passes; its interpreter does not exist, so the exec fails. */
const badInterpreter = join(scratch, 'bad-interpreter');
writeFileSync(badInterpreter, '#!/nonexistent/clibroker-interpreter\n');
chmodSync(badInterpreter, 0o755);

for (const v of await variants()) {
  t.test(`${v.name}: the call directory is made in TMPDIR and removed (control)`, async (t) => {
    const r = await runSandboxed(sh('echo "$HOME"', [], v.more));
    t.equal(r.exitCode, 0, r.stderr);
    const home = r.stdout.trim();
    t.equal(dirname(dirname(home)), own, "the child's HOME was in this test's TMPDIR");
    noneLeft(t, 'removed after a normal end');
  });

  t.test(`${v.name}: a preamble that exits non-zero (CLI_PREAMBLE_FAILED)`, async (t) => {
    const err = await runSandboxed(
      sh('echo never', [], { ...v.more, preamble: ['-c', 'test -d "$HOME" && exit 3; exit 4'] }),
    ).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_PREAMBLE_FAILED', details: { exitCode: 3 } }, 'the preamble ran in its HOME');
    noneLeft(t);
  });

  t.test(`${v.name}: a preamble past the deadline (CLI_TIMEOUT)`, async (t) => {
    const err = await runSandboxed(
      sh('echo never', [], { ...v.more, deadlineMs: 800, preamble: ['-c', 'exec sleep 30'] }),
    ).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_TIMEOUT', details: { phase: 'preamble' } });
    noneLeft(t);
  });

  t.test(`${v.name}: a program whose exec fails (CLI_SPAWN_FAILED)`, async (t) => {
    const err = await runSandboxed(opts(badInterpreter, [], v.more)).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_SPAWN_FAILED' });
    noneLeft(t);
  });

  t.test(`${v.name}: a preamble whose exec fails (CLI_SPAWN_FAILED)`, async (t) => {
    const err = await runSandboxed(opts(badInterpreter, [], { ...v.more, preamble: ['login'] })).catch(
      (e: unknown) => e,
    );
    t.match(err, { code: 'CLI_SPAWN_FAILED' });
    noneLeft(t);
  });

  t.test(`${v.name}: a program that is not there (CLI_SPAWN_FAILED)`, async (t) => {
    const err = await runSandboxed(opts('/nonexistent/clibroker-cli', [], v.more)).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_SPAWN_FAILED' });
    noneLeft(t);
  });

  t.test(`${v.name}: an env value with a NUL byte (CLI_SPAWN_FAILED)`, async (t) => {
    const err = await runSandboxed({
      ...sh('echo never', [], v.more),
      childEnv: { cli: { env: { NOTE: 'x\u0000INJECTED=1' } } },
    }).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_SPAWN_FAILED' });
    noneLeft(t);
  });
}

// Through the runner, as a host calls it: a bootstrap preamble that fails, and a CLI whose exec fails.
const app: Connection = {
  kind: 'oauth_client_credentials',
  clientId: 'app-1',
  clientSecret: 'AppSecretNeverInAnEvent~0001',
  tenantId: 't1',
  tokenUrl: 'https://login.example.com/t1/oauth2/v2.0/token',
};
const ext = (cli: Record<string, unknown>) =>
  defineExtension({
    id: 'calldir-test',
    egress: ['api.github.com'],
    toolkits: { t: { credential: 'auth.default' } },
    clis: [{ id: 'c', ...cli }],
  } as never);

t.test('runner: a failed bootstrap preamble (CLI_PREAMBLE_FAILED) leaves no call directory', async (t) => {
  const f = await runFixture(t);
  const input = f.input('c', ['x'], {
    extension: ext({
      binary: { image: 'plain', entrypoint: '/bin/false' },
      bootstrap: { tokenEndpoint: 'credential.tokenUrl', preamble: ['login', '{clientId}'] },
    }),
    connection: app,
    ...atWrite,
  });
  await t.rejects(f.runner.run(input), { code: 'CLI_PREAMBLE_FAILED' });
  noneLeft(t);
});

t.test('runner: a CLI whose exec fails (CLI_SPAWN_FAILED) leaves no call directory', async (t) => {
  const f = await runFixture(t);
  const input = f.input('c', ['x'], {
    extension: ext({ binary: { image: 'plain', entrypoint: badInterpreter } }),
    ...atWrite,
  });
  await t.rejects(f.runner.run(input), { code: 'CLI_SPAWN_FAILED' });
  noneLeft(t);
});

t.test('runner: control — a CLI that runs leaves no call directory either', async (t) => {
  const f = await runFixture(t);
  const r = await f.runner.run(
    f.input('c', ['-c', 'echo "$HOME"'], {
      extension: ext({ binary: { image: 'plain', entrypoint: 'sh' } }),
    }),
  );
  t.equal(r.exitCode, 0, r.stderr);
  t.equal(dirname(dirname(r.stdout.trim())), own, 'the call directory was in this TMPDIR');
  noneLeft(t, 'removed');
});
