/**
 * A run with a pinned image (RunInput.image): the runner runs the image's executable with
 * its profile — whatever the manifest's binary.entrypoint says — verifies it before
 * anything spawns, never falls back to plain, and hides the image's hiddenPaths from the
 * CLI. The daemon's secret stays home even when the agent tells real curl to upload it.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BrokerError } from '../../src/errors.js';
import { defineExtension } from '../../src/manifest/define.js';
import { curlCli } from '../../src/manifest/examples.js';
import type { RunImage } from '../../src/runs/index.js';
import { isolatedSkip } from '../helpers/bwrap.js';
import { atWrite, githubExtension, runFixture } from './fixtures.js';

/** false where bwrap works; where not, the file fails under CI and these tests are skipped with why elsewhere */
const skip = await isolatedSkip();

/** The github extension with its curl CLI naming the image `curl-pinned` and a decoy entrypoint. */
const pinnedExtension = (entrypoint: string) =>
  defineExtension({
    ...githubExtension,
    clis: [curlCli({ image: 'curl-pinned', entrypoint })],
  } as never);

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-image-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const executionOf = async (f: Awaited<ReturnType<typeof runFixture>>, runId: string) =>
  (
    await f.store.listEvents({ runId, type: ['extension.execution.succeeded', 'extension.execution.failed'] })
  ).map((e) => e.event);

t.test('the pinned executable runs, not binary.entrypoint, and only after verify', { skip }, async (t) => {
  const f = await runFixture(t);
  const calls: string[] = [];
  const image: RunImage = {
    name: 'curl-pinned',
    executable: '/usr/bin/curl',
    profile: 'isolated',
    verify: async () => void calls.push('verify'),
  };
  // The entrypoint names a program that would fail the run: only the pinned curl can reach the vendor.
  const r = await f.runner.run({
    ...f.input('curl', ['-sS', 'https://api.github.com/user']),
    extension: pinnedExtension('/bin/false'),
    image,
  });
  t.match(r, { status: 'completed', exitCode: 0, profile: 'isolated' }, r.stderr);
  t.match(r.stdout, /"login":"octocat"/, 'the pinned curl ran and reached the vendor through the session');
  t.same(calls, ['verify'], 'verify was called once');
  t.equal(f.vendor.log.length, 1);

  // Without an image the manifest's binary.image must name a profile, as before.
  await t.rejects(
    f.runner.run({
      ...f.input('curl', ['-sS', 'https://api.github.com/user']),
      extension: pinnedExtension('/usr/bin/curl'),
    }),
    { code: 'MANIFEST_INVALID' },
    'control: without image, curl-pinned names no profile',
  );
});

t.test(
  'verify runs before anything spawns; a verify that throws means nothing runs, and the execution event has its code',
  async (t) => {
    const f = await runFixture(t);
    const dir = scratch(t);
    const marker = join(dir, 'spawned');
    const seenAtVerify: boolean[] = [];
    // touch stands for the CLI: the marker exists exactly when the pinned program ran (plain: it writes the host's file).
    const image = (verify: () => Promise<void>): RunImage => ({
      name: 'curl-pinned',
      executable: '/usr/bin/touch',
      profile: 'plain',
      verify,
    });

    const ok = await f.runner.run({
      ...f.input('curl', [marker]),
      extension: pinnedExtension('curl'),
      image: image(async () => void seenAtVerify.push(existsSync(marker))),
      runId: 'image-verified',
    });
    t.equal(ok.status, 'completed');
    t.ok(existsSync(marker), 'control: with a verify that passes the pinned program ran');
    t.same(seenAtVerify, [false], 'and it had not run yet when verify was called');
    rmSync(marker);

    const changed = () =>
      Promise.reject(
        new BrokerError('TOOL_VENDOR_CLI_EXECUTABLE_CHANGED', { details: { image: 'curl-pinned' } }),
      );
    await t.rejects(
      f.runner.run({
        ...f.input('curl', [marker]),
        extension: pinnedExtension('curl'),
        image: image(changed),
        runId: 'image-changed',
      }),
      { code: 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED' },
    );
    t.notOk(existsSync(marker), 'the program never ran');
    t.match(
      await executionOf(f, 'image-changed'),
      [{ type: 'extension.execution.failed', code: 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED', cliId: 'curl' }],
      'one execution.failed event with the code',
    );
    t.equal((await executionOf(f, 'image-changed')).length, 1);

    // An image the host looked up under another name would run one CLI's program for another.
    await t.rejects(
      f.runner.run({
        ...f.input('curl', [marker]),
        extension: pinnedExtension('curl'),
        image: { ...image(async () => undefined), name: 'gh-pinned' },
        runId: 'image-mismatch',
      }),
      { code: 'INTERNAL_ERROR' },
    );
    t.notOk(existsSync(marker), 'a mismatched image never runs');
    t.match(await executionOf(f, 'image-mismatch'), [
      { type: 'extension.execution.failed', code: 'INTERNAL_ERROR' },
    ]);
  },
);

t.test(
  "curl -d @<the daemon's secret file>: hidden, curl cannot read it and nothing of it reaches the vendor",
  { skip },
  async (t) => {
    const f = await runFixture(t);
    const dir = scratch(t);
    const secretValue = 'daemon-held-secret-7f3a9c01e5';
    const token = join(dir, 'gh.token');
    const pub = join(dir, 'body.json');
    writeFileSync(token, secretValue, { mode: 0o600 });
    writeFileSync(pub, '{"title":"from a readable file"}');
    const image = (hiddenPaths: string[]): RunImage => ({
      name: 'curl-pinned',
      executable: '/usr/bin/curl',
      profile: 'isolated',
      readOnlyPaths: [dir],
      hiddenPaths,
    });
    const post = (file: string) => [
      '--no-progress-meter',
      '-f',
      '-X',
      'POST',
      '-H',
      'content-type: application/json',
      '-d',
      `@${file}`,
      'https://api.github.com/repos/acme/app/issues',
    ];
    const bodies = () => f.vendor.log.map((x) => x.body.toString());

    const control = await f.runner.run({
      ...f.input('curl', post(token), atWrite),
      extension: pinnedExtension('curl'),
      image: image([]),
    });
    t.equal(control.status, 'completed', control.stderr);
    t.same(
      bodies(),
      [secretValue],
      'control: without hiddenPaths the agent uploads the secret file (the attack)',
    );

    // curl warns that it cannot read the file and sends the POST with an empty body.
    const hidden = await f.runner.run({
      ...f.input('curl', post(token), atWrite),
      extension: pinnedExtension('curl'),
      image: image([token]),
    });
    t.match(
      hidden.stderr,
      /Couldn't read data from file/,
      `curl could not read the hidden file (${hidden.stderr.trim()})`,
    );
    t.same(bodies().slice(1), [''], 'the request it sent carried nothing of it');

    const sibling = await f.runner.run({
      ...f.input('curl', post(pub), atWrite),
      extension: pinnedExtension('curl'),
      image: image([token]),
    });
    t.equal(sibling.status, 'completed', sibling.stderr);
    t.same(
      bodies().slice(2),
      ['{"title":"from a readable file"}'],
      'a file beside it that is not hidden is sent',
    );
    t.notMatch(
      bodies().slice(1).join('\n'),
      secretValue,
      'the secret reached the vendor only in the control run',
    );
  },
);
