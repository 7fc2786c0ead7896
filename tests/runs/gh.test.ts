import t from 'tap';
import { isolatedSkip } from '../helpers/bwrap.js';
import { ghCli } from '../../src/manifest/examples.js';
import { atWrite, REAL_TOKEN, runFixture } from './fixtures.js';

// Real gh (Debian's 2.23) through the broker against the embedded GitHub-like vendor, which
// answers 401 to anything but the real token: a passing call proves the stamping.

t.test('gh api user at tier read', async (t) => {
  const f = await runFixture(t);
  const r = await f.runner.run(f.input('gh', ['api', 'user']));
  t.equal(r.status, 'completed', r.stderr);
  t.equal(r.exitCode, 0);
  t.equal(JSON.parse(r.stdout).login, 'octocat');
  t.equal(r.cliTier, 'read');
  t.equal(r.cliTierReason, 'requested');
  t.equal(f.vendor.log.length, 1);
  t.equal(f.vendor.log[0]!.headers.authorization, `token ${REAL_TOKEN}`, 'the real token was stamped');
  const stored = await f.store.listEvents({ runId: r.runId });
  t.same(
    stored.map((e) => e.event.type),
    ['egress.allowed', 'extension.execution.succeeded'],
  );
  t.match(stored[1]!.event, { cliTier: 'read', cliTierReason: 'requested' });
});

t.test('gh issue list (a GraphQL query) at tier read', async (t) => {
  const f = await runFixture(t);
  const r = await f.runner.run(f.input('gh', ['issue', 'list', '--repo', 'acme/app']));
  t.equal(r.status, 'completed', r.stderr);
  t.match(r.stdout, /^12\tOPEN\tCrash on start\tbug/);
  t.match(f.events[0], { method: 'POST', path: '/graphql', class: 'read' });
});

t.test('gh issue create: denied at read (the refusal wins), allowed at write', async (t) => {
  const f = await runFixture(t);
  const args = ['issue', 'create', '--repo', 'acme/app', '--title', 'x', '--body', 'y'];
  const denied = await f.runner.run(f.input('gh', args));
  t.equal(denied.status, 'refused');
  t.not(denied.exitCode, 0, 'gh exited non-zero');
  t.match(denied.stderr, /HTTP 422: CLI_REQUEST_TIER_DENIED: /, 'gh printed the refusal');
  if (denied.status === 'refused')
    t.match(denied.refusal, {
      code: 'POLICY_BLOCKED',
      policyCode: 'CLI_REQUEST_TIER_DENIED',
      method: 'POST',
      host: 'api.github.com',
      path: '/graphql',
    });
  t.equal(
    f.vendor.log.filter((r) => r.body.toString().includes('createIssue')).length,
    0,
    'the mutation never reached the vendor',
  );

  const ok = await f.runner.run(f.input('gh', args, atWrite));
  t.equal(ok.status, 'completed', ok.stderr);
  t.equal(ok.stdout.trim(), 'https://github.com/acme/app/issues/13');
  t.equal(f.vendor.log.filter((r) => r.body.toString().includes('createIssue')).length, 1);
});

t.test('gh repo delete pauses for approval; approve; the re-run sends the DELETE exactly once', async (t) => {
  const f = await runFixture(t);
  const input = f.input('gh', ['repo', 'delete', 'acme/app', '--yes'], atWrite);
  const paused = await f.runner.run(input);
  t.equal(paused.status, 'paused');
  if (paused.status !== 'paused') return;
  t.match(paused.approval, {
    status: 'pending',
    method: 'DELETE',
    host: 'api.github.com',
    path: '/repos/acme/app',
    tool: 'gh_cli',
  });
  t.match(paused.approval.digest, /^[0-9a-f]{64}$/);
  t.match(paused.stderr, /CLI_APPROVAL_PENDING/);
  t.equal(f.vendor.log.filter((r) => r.method === 'DELETE').length, 0, 'nothing deleted yet');

  await t.rejects(
    f.runner.resume(paused.approval.id, input),
    { code: 'APPROVAL_NOT_PENDING' },
    'cannot resume before approval',
  );
  await f.runner.approve(paused.approval.id, 'alice@example.com');
  const done = await f.runner.resume(paused.approval.id, input);
  t.equal(done.status, 'completed', done.stderr);
  t.equal(done.runId, paused.runId, 'the resumed run keeps its id');
  t.equal(f.vendor.log.filter((r) => r.method === 'DELETE').length, 1, 'deleted exactly once');
  t.equal((await f.store.getApproval(paused.approval.id))?.status, 'consumed');

  const again = await f.runner.resume(paused.approval.id, input).catch((e: { code: string }) => e);
  t.match(again, { code: 'APPROVAL_NOT_PENDING' }, 'single use: a consumed approval cannot run again');
  t.equal(f.vendor.log.filter((r) => r.method === 'DELETE').length, 1);
});

t.test('a rejected approval can never run', async (t) => {
  const f = await runFixture(t);
  const input = f.input('gh', ['api', '-X', 'DELETE', 'repos/acme/app/issues/comments/1'], atWrite);
  const paused = await f.runner.run(input);
  if (paused.status !== 'paused') return t.fail(`expected paused, got ${paused.status}`);
  await f.runner.reject(paused.approval.id, 'bob@example.com');
  await t.rejects(f.runner.resume(paused.approval.id, input), { code: 'EXEC_ACTION_CONFIRMATION_DECLINED' });
  await t.rejects(f.runner.approve(paused.approval.id, 'mallory@example.com'), {
    code: 'APPROVAL_NOT_PENDING',
  });
  t.equal(f.vendor.log.filter((r) => r.method === 'DELETE').length, 0);
});

t.test('destructive requests outside an agent step with a person fail with their own codes', async (t) => {
  const f = await runFixture(t);
  const cases = {
    chat: 'CLI_CONFIRMATION_REQUIRED',
    api: 'CLI_CONFIRMATION_REQUIRED',
    'tool-block': 'CLI_CONFIRMATION_REQUIRED',
    scheduled: 'CLI_CONFIRMATION_REQUIRED',
    'agent-step-never-asks': 'CLI_CONFIRMATION_NOT_APPROVABLE',
  } as const;
  for (const [kind, code] of Object.entries(cases)) {
    const r = await f.runner.run(
      f.input('gh', ['repo', 'delete', 'acme/app', '--yes'], {
        ...atWrite,
        context: { kind: kind as keyof typeof cases },
      }),
    );
    t.equal(r.status, 'refused', kind);
    // the rule is the call's failure code itself, not POLICY_BLOCKED with a policyCode
    if (r.status === 'refused') t.same([r.refusal.code, r.refusal.policyCode], [code, undefined], kind);
  }
  t.equal(f.vendor.log.length, 0);
  t.equal((await f.store.listApprovals()).length, 0, 'no approval is created where no person can approve');
});

t.test(
  'cliTier or approvedRequestDigests in the tool arguments: INVALID_TOOL_INPUT, nothing runs',
  async (t) => {
    const f = await runFixture(t);
    for (const smuggled of [{ cliTier: 'write' }, { approvedRequestDigests: ['a'.repeat(64)] }]) {
      await t.rejects(
        f.runner.run(
          f.input('gh', ['api', 'user'], {
            context: { kind: 'agent-step', toolArgs: { argv: ['api', 'user'], ...smuggled } },
          }),
        ),
        { code: 'INVALID_TOOL_INPUT' },
      );
    }
    t.equal(f.vendor.log.length, 0);
    t.equal(f.events.length, 0);
  },
);

t.test(
  'gh in the isolated profile: its own network namespace, the broker bridged in',
  // bwrap missing or refused: the file fails under CI, the test is skipped with why elsewhere
  { skip: await isolatedSkip() },
  async (t) => {
    const f = await runFixture(t);
    const ext = {
      ...f.input('gh', []).extension,
      clis: [ghCli({ image: 'isolated' })],
    };
    const r = await f.runner.run({
      ...f.input('gh', ['issue', 'list', '--repo', 'acme/app']),
      extension: ext,
    });
    t.equal(r.profile, 'isolated');
    t.equal(r.status, 'completed', r.stderr);
    t.match(r.stdout, /^12\tOPEN\tCrash on start/);
    t.equal(f.vendor.log[0]!.headers.authorization, `token ${REAL_TOKEN}`);
  },
);
