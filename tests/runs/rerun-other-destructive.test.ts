/**
 * A resumed run carries only the one approval it was resumed with (docs/runs.md, Approvals:
 * "re-runs the whole command once with that one digest approved"), end to end through the
 * runs layer with real gh. `gh release delete v1` looks the release up by its tag, then
 * deletes the URL the vendor answered with. The run pauses on DELETE …/releases/101 (A); a
 * person approves A; before the re-run the vendor's answer changes (the tag now names release
 * 202), so the re-run's gh sends a different destructive request B. B must pause again with an
 * approval of its own (or be refused), never reach the vendor, and A's approval stays unspent:
 * its digest covers A only. When the vendor answers as before, resuming A sends A once.
 */
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor, type VendorRequest } from '../../src/mockvendor/server.js';
import { createRunner, type RunInput } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import { atWrite, githubConnection, githubExtension, REAL_TOKEN } from './fixtures.js';

/** A GitHub-like vendor whose release for tag v1 is `state.releaseId` (the rest: githubVendor). */
async function setup(t: { teardown(fn: () => unknown): void }) {
  const base = githubVendor({ token: [REAL_TOKEN] });
  const state = { releaseId: 101 };
  const vendor = await startMockVendor((req: VendorRequest) => {
    const authorized = String(req.headers.authorization ?? '').endsWith(REAL_TOKEN);
    if (!authorized) return base(req);
    if (req.method === 'GET' && req.path === '/repos/acme/app/releases/tags/v1') {
      const id = state.releaseId;
      return {
        status: 200,
        body: {
          id,
          tag_name: 'v1',
          name: 'v1',
          draft: false,
          prerelease: false,
          url: `https://api.github.com/repos/acme/app/releases/${id}`,
          html_url: 'https://github.com/acme/app/releases/tag/v1',
          assets: [],
        },
      };
    }
    if (
      req.method === 'POST' &&
      req.path === '/graphql' &&
      req.body.toString('utf8').includes('RepositoryReleaseByTag')
    ) {
      return {
        status: 200,
        body: { data: { repository: { release: { databaseId: state.releaseId, isDraft: false } } } },
      };
    }
    if (req.method === 'DELETE' && /^\/repos\/acme\/app\/releases\/\d+$/.test(req.path))
      return { status: 204 };
    return base(req);
  });
  const broker = await createBroker({
    upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
  });
  const store = openSqliteStore(':memory:');
  const runner = createRunner({ broker, store });
  t.teardown(async () => {
    await broker.close();
    await vendor.close();
    await store.close();
  });
  const input: RunInput = {
    extension: githubExtension,
    cli: 'gh',
    args: ['release', 'delete', 'v1', '--repo', 'acme/app', '--yes'],
    connection: githubConnection,
    context: { kind: 'agent-step', tool: 'gh_cli', toolArgs: {} },
    deadlineMs: 60_000,
    ...atWrite,
  };
  return { vendor, state, store, runner, input };
}

const deletes = (log: readonly VendorRequest[]): string[] =>
  log.filter((r) => r.method === 'DELETE').map((r) => `${r.method} ${r.path}`);

t.test(
  'a re-run that meets another destructive request pauses on it; the approval covers A only',
  async (t) => {
    const { vendor, state, store, runner, input } = await setup(t);

    const paused = await runner.run(input);
    if (paused.status !== 'paused') return t.fail(`expected paused, got ${paused.status}: ${paused.stderr}`);
    const a = paused.approval;
    t.match(
      a,
      { method: 'DELETE', host: 'api.github.com', path: '/repos/acme/app/releases/101' },
      'paused on A',
    );
    await runner.approve(a.id, 'alice@example.com');

    // The vendor's answer changes: the same command now deletes another release (B).
    state.releaseId = 202;
    const again = await runner.resume(a.id, input);
    t.ok(
      again.status === 'paused' || again.status === 'refused',
      `B paused again or was refused (got ${again.status}: ${again.stderr})`,
    );
    t.same(deletes(vendor.log), [], 'B never reached the vendor (and neither did A)');
    t.match(
      again.refusals[0],
      { method: 'DELETE', path: '/repos/acme/app/releases/202' },
      'the refused request is B',
    );
    t.not(again.refusals[0]?.policyCode, undefined, 'refused by policy');
    t.same(again.unknownOutcomes, [], 'nothing was sent, so nothing is of unknown outcome');
    t.equal(again.outcomeUnknown, false);
    if (again.status === 'paused') {
      const b = again.approval;
      t.not(b.id, a.id, 'a new approval');
      t.not(b.digest, a.digest, 'for another digest');
      t.match(b, {
        runId: a.runId,
        status: 'pending',
        method: 'DELETE',
        path: '/repos/acme/app/releases/202',
      });
    }
    const approvals = await store.listApprovals();
    t.equal(approvals.length, again.status === 'paused' ? 2 : 1, 'no approval but A and a pending one for B');
    const stillA = await store.getApproval(a.id);
    t.equal(stillA?.status, 'approved', "A's approval was not spent on B");
    t.equal(stillA?.consumedAt, undefined);

    // The vendor answers as it did when the person approved: the re-run sends A, once.
    state.releaseId = 101;
    const done = await runner.resume(a.id, input);
    t.equal(done.status, 'completed', `the re-run of A completes (${done.stderr})`);
    t.same(deletes(vendor.log), ['DELETE /repos/acme/app/releases/101'], 'only A reached the vendor, once');
    t.equal((await store.getApproval(a.id))?.status, 'consumed', 'and A is spent');
    await t.rejects(runner.resume(a.id, input), { code: 'APPROVAL_NOT_PENDING' }, 'single use');
    t.same(deletes(vendor.log), ['DELETE /repos/acme/app/releases/101'], 'still only A');
  },
);
