/**
 * Two resumes of one approved approval at once: both pass the runner's status check (each
 * reads `approved` before either consumed it), both re-run the command, and the approved
 * request still reaches the vendor once. Only the store's single consumption and the gate's
 * refusal of a request whose approval was already taken stand between the race and a second
 * DELETE. Real curl through the real broker and a SQLite store.
 */
import t from 'tap';
import { atWrite, runFixture } from './fixtures.js';

t.test('two resumes of one approval at once: the vendor sees the DELETE once', async (t) => {
  const f = await runFixture(t);
  const input = f.input(
    'curl',
    ['-sS', '-X', 'DELETE', 'https://api.github.com/repos/acme/app/issues/comments/7'],
    atWrite,
  );
  const paused = await f.runner.run(input);
  if (paused.status !== 'paused') return t.fail(`expected paused, got ${paused.status}`);
  await f.runner.approve(paused.approval.id, 'alice@example.com');
  const [a, b] = await Promise.all([
    f.runner.resume(paused.approval.id, input),
    f.runner.resume(paused.approval.id, input),
  ]);
  const deletes = f.vendor.log.filter((x) => x.method === 'DELETE');
  t.equal(deletes.length, 1, 'the approved request reached the vendor once');
  const statuses = [a.status, b.status].sort();
  t.same(statuses, ['completed', 'refused'], 'one resume ran it; the other was refused');
  const refused = [a, b].find((r) => r.status === 'refused');
  if (refused?.status === 'refused')
    t.equal(refused.refusal.code, 'CLI_CONFIRMATION_REQUIRED', 'its approval was already taken');
  t.equal((await f.store.getApproval(paused.approval.id))?.status, 'consumed');
});
