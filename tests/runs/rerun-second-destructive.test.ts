import t from 'tap';
import { atWrite, runFixture } from './fixtures.js';

// What docs/serve.md and docs/runs.md say of a re-run: it carries only the approval it was
// resumed with, and once that request was sent, a second destructive request of the same
// command is refused with CLI_CONFIRMATION_AFTER_WRITE (re-running again would repeat the
// first) instead of pausing again. Real curl, two DELETEs in one command.

t.test('a re-run that meets a second destructive request: CLI_CONFIRMATION_AFTER_WRITE', async (t) => {
  const f = await runFixture(t);
  const input = f.input(
    'curl',
    [
      '-sS',
      '-X',
      'DELETE',
      'https://api.github.com/repos/acme/app/issues/comments/7?purge=all',
      '--next',
      '-sS',
      '-X',
      'DELETE',
      'https://api.github.com/repos/acme/app/issues/comments/8',
    ],
    atWrite,
  );
  const paused = await f.runner.run(input);
  if (paused.status !== 'paused') return t.fail(`expected paused, got ${paused.status}`);
  t.match(paused.approval, { method: 'DELETE', path: '/repos/acme/app/issues/comments/7?purge=all' });
  await f.runner.approve(paused.approval.id, 'alice@example.com');
  const again = await f.runner.resume(paused.approval.id, input);
  t.equal(again.status, 'refused');
  if (again.status === 'refused') t.equal(again.refusal.code, 'CLI_CONFIRMATION_AFTER_WRITE');
  t.same(
    f.vendor.log.map((x) => `${x.method} ${x.path}`),
    ['DELETE /repos/acme/app/issues/comments/7'],
    'the approved DELETE was sent once, the second never',
  );
  t.match(again.unknownOutcomes, [{ method: 'DELETE', path: '/repos/acme/app/issues/comments/7' }]);
  const approvals = await f.store.listApprovals();
  t.equal(approvals.length, 1, 'no second approval');
});
