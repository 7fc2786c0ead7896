/**
 * strictProfile: an isolated run where bubblewrap cannot work refuses with
 * TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE before anything is created or spawned, instead of
 * falling back to plain. The same unusable bwrap without strictProfile does fall back (the
 * program runs, its call directory appears): that is the control that lets the strict case fail.
 */
import { existsSync, mkdtempSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runSandboxed } from '../../src/sandbox/index.js';
import { opts } from './helpers.js';

/**
 * Points the sandbox's tmp at a directory of this test's own (other tests on the machine
 * make theirs in /tmp) and records every name created in it: a call directory made and
 * removed again still shows.
 */
function watchedTmp(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-strict-tmp-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  let names: string[] = [];
  const watcher = watch(dir, (_event, name) => {
    if (name) names.push(String(name));
  });
  t.teardown(() => {
    watcher.close();
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    /** the call directories created since the last call (fs.watch reports a little later) */
    async taken(): Promise<string[]> {
      await new Promise((r) => setTimeout(r, 100));
      const out = [...new Set(names.filter((n) => n.startsWith('clibroker-sbx-')))];
      names = [];
      return out;
    },
  };
}

const unusable: Record<string, { bwrap: string; reason: RegExp }> = {
  'bwrap missing': { bwrap: '/nonexistent/bwrap', reason: /^\/nonexistent\/bwrap cannot be run: ENOENT/ },
  'bwrap refusing (exits 1)': { bwrap: '/usr/bin/false', reason: /^\/usr\/bin\/false failed \(exit 1\)/ },
};

t.test(
  'strictProfile with an unusable bwrap: TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE, nothing created or spawned',
  async (t) => {
    t.plan(Object.keys(unusable).length * 7);
    const tmp = watchedTmp(t);
    for (const [name, u] of Object.entries(unusable)) {
      const dir = mkdtempSync(join('/tmp', 'clibroker-strict-'));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      const marker = join(dir, 'ran');
      const touch = opts('/bin/sh', ['-c', 'touch "$1"', 'sh', marker], {
        image: 'isolated',
        bwrap: u.bwrap,
      });

      const fallback = await runSandboxed(touch);
      t.equal(
        fallback.profile,
        'plain',
        `${name}: control, without strictProfile the call falls back to plain`,
      );
      t.ok(existsSync(marker), `${name}: control, and the program ran`);
      t.equal((await tmp.taken()).length, 1, `${name}: control, a call directory was made (and removed)`);
      rmSync(marker);

      await t.rejects(
        runSandboxed({ ...touch, strictProfile: true }),
        { code: 'TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE', details: { reason: u.reason } },
        `${name}: strict refuses with bwrap's reason`,
      );
      t.notOk(existsSync(marker), `${name}: strict, the program never ran`);
      t.same(await tmp.taken(), [], `${name}: strict, no call directory was made`);
      // Paths asked to be hidden would be readable in plain: no fallback either, strict or not.
      await t.rejects(
        runSandboxed({ ...touch, hiddenPaths: [dir] }),
        { code: 'TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE' },
        `${name}: hiddenPaths alone forbid the fallback too`,
      );
    }
  },
);

t.test('strictProfile asks nothing of the plain profile', async (t) => {
  const r = await runSandboxed(
    opts('/bin/echo', ['ok'], { image: 'plain', strictProfile: true, bwrap: '/nonexistent/bwrap' }),
  );
  t.equal(r.stdout, 'ok\n');
  t.equal(r.profile, 'plain');
  t.equal(r.hiddenPathsEnforced, false);
});
