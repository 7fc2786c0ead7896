/**
 * The parent's environment is out of the isolated child's reach: a daemon started with a
 * secret in its environment spawns a child that scans every /proc/<pid>/environ. From the
 * plain profile the scan finds the parent's variable (same user, same /proc): that control
 * is what lets the isolated case fail. The parent is a process of its own because
 * /proc/<pid>/environ shows the environment a process was started with: a variable this
 * test set in process.env would never appear there, and the control could not find it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import type { SandboxResult } from '../../src/sandbox/types.js';
import { isolatedSkip } from '../helpers/bwrap.js';

/** false where bwrap works; where not, the file fails under CI and each test here is skipped with why elsewhere */
const skip = await isolatedSkip();
const parent = fileURLToPath(new URL('./fixtures/environ-parent.ts', import.meta.url));
const name = `CLIBROKER_PARENT_SECRET_${randomBytes(4).toString('hex').toUpperCase()}`;
const value = `s3cr3t-${randomBytes(12).toString('hex')}`;

async function runFromParent(
  profile: string,
): Promise<{ found: number; readable: number; r: SandboxResult }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import=tsx', parent, profile, name], {
    env: { ...process.env, [name]: value },
    timeout: 60_000,
  });
  const r = JSON.parse(stdout) as SandboxResult;
  const m = /^(\d+)\nreadable=(\d+)\n$/.exec(r.stdout);
  if (!m) throw new Error(`unexpected scan output: ${r.stdout} ${r.stderr}`);
  return { found: Number(m[1]), readable: Number(m[2]), r };
}

t.test("plain (control): the child reads the parent's environ", async (t) => {
  const { found, r } = await runFromParent('plain');
  t.equal(r.profile, 'plain');
  t.ok(found >= 1, `the scan found ${name} in ${found} environ file(s): the plain profile's stated limit`);
  t.notMatch(r.stdout + r.stderr, value, 'the scan prints counts, never the value');
});

t.test("isolated: no /proc/<pid>/environ inside holds the parent's variable", { skip }, async (t) => {
  const { found, readable, r } = await runFromParent('isolated');
  t.equal(r.profile, 'isolated');
  t.equal(found, 0, `${name} is in no environ the child can read`);
  t.ok(
    readable > 0,
    `the scan did read environ files (${readable} bytes: its own processes'), so finding nothing means something`,
  );
});
