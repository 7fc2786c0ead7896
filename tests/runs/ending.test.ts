/**
 * How a run ends when the CLI does not exit on its own: the deadline firing while a request is
 * in flight is `timed_out`, never a refusal of the request the kill cut off; a CLI killed by
 * a signal fails the call with the signal recorded, never `completed` with exitCode null.
 * Real children (sh running real curl), in the plain and the isolated profile.
 */
import t from 'tap';
import { defineExtension } from '../../src/manifest/define.js';
import type { ExtensionManifest } from '../../src/manifest/types.js';
import { isolationRuns } from '../helpers/bwrap.js';
import { atWrite, githubExtension, runFixture } from './fixtures.js';

/** plain, and isolated where bwrap works: where not, the file fails under CI, the rows are a recorded skip elsewhere */
const images = (await isolationRuns()) ? (['plain', 'isolated'] as const) : (['plain'] as const);

/** The GitHub extension with `sh` as its CLI (the scripts below run real curl). */
const shell = (image: string): ExtensionManifest =>
  defineExtension({
    ...githubExtension,
    id: 'github-sh',
    clis: [{ id: 'sh', binary: { image, entrypoint: '/bin/sh' }, authScheme: 'token' }],
  } as never);

const USER = 'curl -sS -o /dev/null https://api.github.com/user';

const executionEvents = async (f: Awaited<ReturnType<typeof runFixture>>, runId: string) =>
  (
    await f.store.listEvents({ runId, type: ['extension.execution.succeeded', 'extension.execution.failed'] })
  ).map((e) => e.event);

for (const image of images) {
  t.test(
    `${image}: a CLI that SIGKILLs itself between two requests fails the call with the signal`,
    async (t) => {
      const f = await runFixture(t);
      const r = await f.runner.run({
        ...f.input('sh', ['-c', `${USER}; kill -KILL $$; ${USER}`]),
        extension: shell(image),
      });
      t.equal(r.profile, image);
      t.match(
        r,
        { status: 'failed', code: 'CLI_EXITED_BY_SIGNAL', exitCode: null, signal: 'SIGKILL', requests: 1 },
        r.stderr,
      );
      t.equal(f.vendor.log.length, 1, 'the second request was never sent');
      t.match(await executionEvents(f, r.runId), [
        {
          type: 'extension.execution.failed',
          code: 'CLI_EXITED_BY_SIGNAL',
          signal: 'SIGKILL',
          cliTier: 'read',
        },
      ]);
    },
  );

  t.test(
    `${image}: a CLI killed by another process (SIGTERM from its own child) fails the call`,
    async (t) => {
      const f = await runFixture(t);
      // The inner sh kills its parent, the CLI, then the CLI would have gone on to a second request.
      const r = await f.runner.run({
        ...f.input('sh', ['-c', `${USER}; sh -c 'kill -TERM $PPID'; sleep 1; ${USER}`]),
        extension: shell(image),
      });
      t.match(
        r,
        { status: 'failed', code: 'CLI_EXITED_BY_SIGNAL', exitCode: null, signal: 'SIGTERM' },
        r.stderr,
      );
      t.equal(f.vendor.log.length, 1);
      t.match(await executionEvents(f, r.runId), [{ type: 'extension.execution.failed', signal: 'SIGTERM' }]);
    },
  );

  t.test(
    `${image}: the deadline firing during a slow upload is timed_out, not the refusal the kill caused`,
    // the upload alone would take two minutes: the run returning within this limit is the deadline's kill
    { timeout: 60_000 },
    async (t) => {
      const f = await runFixture(t);
      // 512 KiB at 4 KiB/s: about two minutes, so the request is in flight when the 3 s deadline fires.
      const script =
        'head -c 524288 /dev/zero | curl -sS --limit-rate 4k -T - https://api.github.com/repos/acme/app/releases/1/assets';
      const r = await f.runner.run({
        ...f.input('sh', ['-c', script], { ...atWrite, deadlineMs: 3_000 }),
        extension: shell(image),
      });
      t.match(r, { status: 'timed_out', code: 'CLI_TIMEOUT' }, `${r.status}: ${JSON.stringify(r.refusals)}`);
      t.match(await executionEvents(f, r.runId), [
        { type: 'extension.execution.failed', code: 'CLI_TIMEOUT' },
      ]);
    },
  );
}
