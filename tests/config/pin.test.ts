/**
 * Pinned executables: verify() passes while the file is the one hashed, re-hashes when its
 * identity changed, and refuses a rewritten, replaced, removed or swapped file.
 */
import {
  chmodSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { hashFile, loadConfig, pinExecutable } from '../../src/config/index.js';
import { makeFixture, rejection, sha256Of } from './fixtures.js';

const V1 = '#!/bin/sh\necho v1\n';

function setup(t: Parameters<typeof makeFixture>[0]) {
  const f = makeFixture(t);
  const dir = join(f.dir, 'pin');
  mkdirSync(dir, { mode: 0o755 });
  const exe = join(dir, 'tool');
  writeFileSync(exe, V1, { mode: 0o755 });
  return { exe, dir };
}

t.test('hashFile streams the file', async (t) => {
  const { exe } = setup(t);
  t.equal(await hashFile(exe), sha256Of(V1));
  t.equal(await hashFile('/usr/bin/curl'), sha256Of(readFileSync('/usr/bin/curl')));
});

t.test('verify passes while the bytes are the pinned ones, touched or rewritten the same', async (t) => {
  const { exe } = setup(t);
  const p = await pinExecutable(exe, sha256Of(V1), 'tool');
  await p.verify();
  writeFileSync(exe, V1);
  utimesSync(exe, new Date(2001, 1, 1), new Date(2001, 1, 1));
  await p.verify();
  await p.verify();
  t.pass('unchanged bytes pass');
});

t.test('a rewritten executable is refused, even with its old size and times restored', async (t) => {
  const { exe } = setup(t);
  const p = await pinExecutable(exe, sha256Of(V1), 'tool');
  const before = statSync(exe);
  writeFileSync(exe, V1.replace('v1', 'v2'));
  utimesSync(exe, before.atime, before.mtime);
  const e = await rejection(p.verify());
  t.equal(e.code, 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED');
  t.match(
    e.message,
    `the executable of image "tool" (${exe}) no longer has the pinned sha256; nothing was run`,
  );
  t.notMatch(e.message, sha256Of(V1), 'no hash in the message');
  t.same(e.details, { image: 'tool', executable: exe });
  // it stays refused: the identity is not renewed for a mismatch
  t.match(await rejection(p.verify()), { code: 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED' });
});

t.test('a replaced, removed or symlinked executable is refused', async (t) => {
  const { exe, dir } = setup(t);
  const p = await pinExecutable(exe, sha256Of(V1), 'tool');
  const other = join(dir, 'other');
  writeFileSync(other, '#!/bin/sh\necho other\n', { mode: 0o755 });
  renameSync(other, exe);
  t.match(await rejection(p.verify()), { code: 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED' }, 'renamed over');
  rmSync(exe);
  t.match(
    await rejection(p.verify()),
    { code: 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED', message: /cannot be read \(ENOENT\)/ },
    'removed',
  );
  const real = join(dir, 'real');
  writeFileSync(real, V1, { mode: 0o755 });
  symlinkSync(real, exe);
  t.match(
    await rejection(p.verify()),
    { code: 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED', message: /no longer a regular file/ },
    'a symlink to the same bytes',
  );
});

t.test('pinExecutable refuses a file without the given sha256', async (t) => {
  const { exe } = setup(t);
  t.match(await rejection(pinExecutable(exe, '0'.repeat(64))), {
    code: 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED',
    message: /does not have the pinned sha256/,
  });
});

t.test("a loaded image's verify() sees the rewrite of its pinned executable", async (t) => {
  const f = makeFixture(t);
  const c = await loadConfig(f.write(), { env: f.env });
  const gh = c.images.get('gh')!;
  await gh.verify();
  chmodSync(f.exe('gh'), 0o755);
  await gh.verify();
  writeFileSync(f.exe('gh'), '#!/bin/sh\necho not gh\n');
  const e = await rejection(gh.verify());
  t.equal(e.code, 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED');
  t.match(e.message, `image "gh" (${f.exe('gh')})`);
  await c.images.get('base')!.verify();
});
