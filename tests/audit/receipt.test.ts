/**
 * `clibroker audit receipt <runId>` on a store a real run filled: real curl through the real
 * runner and broker against the mock vendor, a destructive request paused for approval,
 * approved by a person, and the run resumed. The receipt names the tool, the argv digest, the
 * tier and its reason, every request with class, decision and reason, the approval and who
 * decided it, and the chain hash of each event it cites: those are the hashes stored at those
 * seqs, and its head is the one `audit verify` reports.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import type { Receipt } from '../../src/store/receipt.js';
import { runCli, testCli } from '../cli/fixtures/helpers.js';
import { atWrite, runFixture } from '../runs/fixtures.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { tempDir } from '../store/fixtures/index.js';

const cli = testCli(BUNDLED_TOOLS);

t.test('a paused, approved and resumed run: its receipt, checkable against audit verify', async (t) => {
  const path = join(tempDir(t), 'store.db');
  const f = await runFixture(t, { storePath: path });
  const args = ['-sS', '-X', 'DELETE', 'https://api.github.com/repos/acme/app'];
  const input = f.input('curl', args, atWrite);
  const paused = await f.runner.run(input);
  if (paused.status !== 'paused') return t.fail(`expected paused, got ${paused.status}`);
  await f.runner.approve(paused.approval.id, 'alice@example.com');
  const done = await f.runner.resume(paused.approval.id, input);
  t.equal(done.status, 'completed');

  const r = await runCli(cli, ['audit', 'receipt', paused.runId, '--store', path]);
  t.equal(r.code, 0, r.stdout);
  const receipt = (r.env as { data: Receipt }).data;
  t.match(receipt, {
    runId: paused.runId,
    extensionId: 'github',
    cliId: 'curl',
    tool: 'curl_cli',
    argvDigest: createHash('sha256').update(JSON.stringify(args)).digest('hex'),
    cliTier: 'write',
    cliTierReason: String,
    outcome: 'succeeded',
    approvals: [
      {
        id: paused.approval.id,
        status: 'consumed',
        method: 'DELETE',
        host: 'api.github.com',
        decidedBy: 'alice@example.com',
        decidedAt: String,
      },
    ],
    chain: { eventsMatch: true },
  });
  t.match(
    receipt.calls,
    [{ type: 'extension.execution.failed', code: String }, { type: 'extension.execution.succeeded' }],
    'both calls of the run: the paused one and the resumed one',
  );
  t.match(
    receipt.requests,
    [
      { method: 'DELETE', class: 'destructive', decision: 'deny', reason: String },
      { method: 'DELETE', class: 'destructive', decision: 'allow', reason: String, status: Number },
    ],
    'the refused request, then the approved one',
  );

  // every cited hash is the one stored at its seq
  const db = new Database(path, { readonly: true });
  t.teardown(() => db.close());
  const stored = db.prepare('SELECT hash FROM audit_events WHERE seq = ?');
  for (const e of [...receipt.calls, ...receipt.requests])
    t.equal(e.hash, (stored.get(e.seq) as { hash: string }).hash, `seq ${e.seq}`);

  const v = await runCli(cli, ['audit', 'verify', '--store', path]);
  t.equal(v.code, 0, v.stdout);
  const verified = (v.env as { data: { head: string; last: number } }).data;
  t.same(receipt.chain.head, { seq: verified.last, hash: verified.head }, "the receipt's head is verify's");

  const none = await runCli(cli, ['audit', 'receipt', 'no-such-run', '--store', path]);
  t.equal(none.code, 1);
  t.match(none.env, { error: { code: 'AUDIT_RUN_NOT_FOUND' } });
});

t.test(
  "a call whose connection minted a token: the receipt names the token's grant, never the token",
  async (t) => {
    const path = join(tempDir(t), 'store.db');
    const store = openSqliteStore(path);
    const mintedToken = {
      kind: 'github_app' as const,
      tier: 'read' as const,
      permissions: { contents: 'read', metadata: 'read' },
      repositories: ['app'],
      expiresAt: '2026-12-06T17:00:00.000Z',
    };
    await store.appendEvent({
      type: 'extension.execution.succeeded',
      time: '2026-12-06T16:00:00.000Z',
      runId: 'run-minted',
      extensionId: 'github',
      cliId: 'gh',
      cliTier: 'read',
      cliTierReason: 'requested',
      exitCode: 0,
      mintedToken,
    });
    await store.close();
    const r = await runCli(cli, ['audit', 'receipt', 'run-minted', '--store', path]);
    t.equal(r.code, 0, r.stdout);
    const receipt = (r.env as { data: Receipt }).data;
    t.same(receipt.mintedToken, mintedToken, 'the last call’s grant, at the top');
    t.same(receipt.calls[0]?.mintedToken, mintedToken, 'and on the call');
  },
);
