/** Input limits are refused before anything runs; a bad program is CLI_SPAWN_FAILED. */
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BrokerError } from '../../src/errors.js';
import { runSandboxed, type SandboxOptions } from '../../src/sandbox/index.js';
import { opts, profiles, sh } from './helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'clibroker-sbx-test-'));
t.teardown(() => import('node:fs').then((fs) => fs.rmSync(scratch, { recursive: true, force: true })));

const KiB = 1024;
/** plain, and isolated where bwrap works (its absence is failed under CI, a recorded skip elsewhere) */
const images = await profiles();
const marker = (name: string): string => join(scratch, name);
/** A run that would leave a marker file if it ever started. */
const touching = (name: string, more: Partial<SandboxOptions> = {}, extra: string[] = []): SandboxOptions =>
  sh('touch "$1"', [marker(name), ...extra], more);

/** Each case gets its own marker file (named after its position) that exists only if the command ran. */
const refused: Record<string, (m: string) => SandboxOptions> = {
  '257 arguments': (m) =>
    touching(
      m,
      {},
      Array.from({ length: 253 }, () => 'x'),
    ), // -c script sh marker + 253
  'an argument of 32 KiB + 1': (m) => touching(m, {}, ['y'.repeat(32 * KiB + 1)]),
  'an argument of 32 KiB + 1 counted in UTF-8 bytes': (m) => touching(m, {}, ['é'.repeat(16 * KiB + 1)]),
  'stdin of 1 MiB + 1': (m) => touching(m, { stdin: Buffer.alloc(1024 * KiB + 1) }),
  'a deadline over 270 s': (m) => touching(m, { deadlineMs: 270_001 }),
  'a zero deadline': (m) => touching(m, { deadlineMs: 0 }),
  'a NUL inside an argument': (m) => touching(m, {}, ['a\0b']),
  'a relative readOnlyPaths entry': (m) => touching(m, { readOnlyPaths: ['opt/az'] }),
  'a preamble argument of 32 KiB + 1': (m) =>
    touching(m, { preamble: ['-c', 'true', 'z'.repeat(32 * KiB + 1)] }),
};

t.test('over the limits: INVALID_TOOL_INPUT and nothing ran', async (t) => {
  const cases = Object.entries(refused);
  t.plan(cases.length * 3);
  for (const [i, [name, make]] of cases.entries()) {
    const err = await runSandboxed(make(`case-${i}`)).catch((e: unknown) => e);
    t.ok(err instanceof BrokerError && err.code === 'INVALID_TOOL_INPUT', `${name}: INVALID_TOOL_INPUT`);
    t.notOk(existsSync(marker(`case-${i}`)), `${name}: the command never ran`);
    t.notMatch(JSON.stringify(err), /yyyy|éé|zzzz/, `${name}: the argument value is not in the error`);
  }
});

t.test('at the limits: runs', async (t) => {
  const r = await runSandboxed(
    sh(
      'printf "%s" "$#"; cat | wc -c >&2',
      Array.from({ length: 252 }, (_, i) => (i === 0 ? 'q'.repeat(32 * KiB) : 'x')),
      { stdin: Buffer.alloc(1024 * KiB, 0x61) },
    ),
  );
  t.equal(r.exitCode, 0, r.stderr);
  t.equal(r.stdout, '252', '256 arguments (sh -c script sh + 252) reached the child');
  t.equal(r.stderr.trim(), String(1024 * KiB), 'all of 1 MiB stdin arrived');
});

t.test(
  'within each limit but over the kernel total (ARG_MAX): INVALID_TOOL_INPUT, not a crash',
  async (t) => {
    const big = Array.from({ length: 252 }, () => 'w'.repeat(32 * KiB)); // 8 MiB of arguments
    for (const image of images) {
      const err = await runSandboxed(touching(`argmax-${image}`, { image }, big)).catch((e: unknown) => e);
      t.match(err, { code: 'INVALID_TOOL_INPUT', details: { reason: 'E2BIG' } }, image);
      t.notOk(existsSync(marker(`argmax-${image}`)), `${image}: nothing ran`);
    }
  },
);

t.test('an image that names no profile is a manifest problem', async (t) => {
  const err = await runSandboxed(touching('i', { image: 'docker:latest' })).catch((e: unknown) => e);
  t.match(err, {
    code: 'MANIFEST_INVALID',
    details: { problems: [{ code: 'MANIFEST_FIELD_INVALID', path: 'binary.image' }] },
  });
  t.notOk(existsSync(marker('i')));
});

t.test('a program that cannot run: CLI_SPAWN_FAILED', async (t) => {
  const notExec = join(scratch, 'not-exec');
  writeFileSync(notExec, '#!/bin/sh\necho hi\n');
  chmodSync(notExec, 0o644);
  const cases: Record<string, string> = {
    'missing absolute path': '/nonexistent/clibroker-cli',
    'not executable': notExec,
    'a directory': '/usr/bin',
    'relative path': './bin/gh',
    'bare name not on the child PATH': 'clibroker-no-such-cli',
  };
  t.plan(Object.keys(cases).length);
  for (const [name, entry] of Object.entries(cases)) {
    const err = await runSandboxed(opts(entry, [])).catch((e: unknown) => e);
    t.match(err, { code: 'CLI_SPAWN_FAILED' }, name);
  }
});
