import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { type Approval, openStore, type StoredEvent } from '../../src/store/index.js';
import { BACKENDS } from './fixtures/backends.js';
import { blocked, DIGEST_A, egress, execution, pending } from './fixtures/index.js';

// Every case runs against each backend (a SQLite file, a PostgreSQL database).
for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    t.test(
      'a broker restarted mid-approval keeps the pending approval and every audit event (clean close)',
      async (t) => {
        const path = await backend.location(t);
        const before = await openStore(path, { migrate: true });
        await before.setAssignmentTier({
          extensionId: 'github',
          assignmentId: 'block-7',
          cliId: 'gh',
          tier: 'write',
          who: 'alice',
        });
        await before.appendEvent(egress());
        await before.appendEvent(blocked({ method: 'DELETE', policyCode: 'CLI_APPROVAL_PENDING' }));
        await before.appendEvent(
          execution({ type: 'extension.execution.failed', code: 'CLI_APPROVAL_PENDING' }),
        );
        const approval = await before.createApproval(pending());
        const events = await before.listEvents();
        await before.close();

        const after = await backend.open(t, path);
        t.same(
          await after.listApprovals({ status: 'pending' }),
          [approval],
          'the pending approval is there, unchanged',
        );
        t.same(await after.listEvents(), events, 'every event, in order');
        t.equal(
          await after.getAssignmentTier({ extensionId: 'github', assignmentId: 'block-7', cliId: 'gh' }),
          'write',
        );
        // And the approval flow goes on where it stopped.
        await after.approve(approval.id, 'alice');
        t.equal((await after.consumeApproved(DIGEST_A, 'run-1'))?.id, approval.id);
        t.equal(await after.consumeApproved(DIGEST_A, 'run-1'), undefined);
      },
    );

    t.test(
      'a broker killed with SIGKILL mid-approval keeps the pending approval and every audit event',
      async (t) => {
        const path = await backend.location(t);
        const writer = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));
        const child = spawn(process.execPath, ['--import', 'tsx', writer, path], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        t.teardown(() => child.kill('SIGKILL'));
        let out = '';
        child.stdout.setEncoding('utf8');
        for await (const chunk of child.stdout) {
          out += chunk;
          if (out.includes('\n')) break;
        }
        const wrote = JSON.parse(out) as { approval: Approval; events: StoredEvent[] };
        child.kill('SIGKILL');
        await once(child, 'exit');
        t.equal(child.signalCode, 'SIGKILL', 'it did not close the store');
        t.equal(wrote.events.length, 23, 'tier event, 20 allowed, 1 blocked, 1 failed execution');

        const after = await backend.open(t, path);
        t.same(await after.listApprovals({ status: 'pending' }), [wrote.approval]);
        t.same(await after.listEvents(), wrote.events, 'every acknowledged event survived');
        t.equal(
          await after.getAssignmentTier({ extensionId: 'github', assignmentId: 'block-7', cliId: 'gh' }),
          'write',
        );
      },
    );
  });
}
