/**
 * createRunner's options and a run's input are checked where they enter: each bad field is
 * refused with its catalogue code and path before anything runs (no process, no session).
 */
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { createRunner, type RunInput, type RunnerOptions } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import { githubConnection, githubExtension } from './fixtures.js';

const good: RunInput = {
  extension: githubExtension,
  cli: 'curl',
  args: ['-sS', 'https://api.github.com/user'],
  connection: githubConnection,
  tier: { requested: 'read', organizationCeiling: 'write', assignmentAllow: 'write', identity: 'assigned' },
  context: { kind: 'agent-step', tool: 'curl_cli' },
  deadlineMs: 60_000,
};

const inputCases: Record<string, [over: Record<string, unknown>, path: string]> = {
  'args not an array': [{ args: '-sS' }, 'args'],
  'an argument not a string': [{ args: ['-sS', 1] }, 'args[1]'],
  'no cli': [{ cli: '' }, 'cli'],
  'no extension': [{ extension: undefined }, 'extension'],
  'no connection': [{ connection: undefined }, 'connection'],
  "a requested tier 'admin'": [{ tier: { ...good.tier, requested: 'admin' } }, 'tier.requested'],
  'no organization ceiling': [
    { tier: { ...good.tier, organizationCeiling: undefined } },
    'tier.organizationCeiling',
  ],
  'an unknown identity': [{ tier: { ...good.tier, identity: 'robot' } }, 'tier.identity'],
  'an unknown context kind': [{ context: { kind: 'cron' } }, 'context.kind'],
  'a deadline above 270 s': [{ deadlineMs: 999_999 }, 'deadlineMs'],
  'a deadline of zero': [{ deadlineMs: 0 }, 'deadlineMs'],
  'a digest not hex': [{ approvedRequestDigests: ['abc'] }, 'approvedRequestDigests[0]'],
  'a run id too long': [{ runId: 'r'.repeat(129) }, 'runId'],
  'stdin a number': [{ stdin: 5 }, 'stdin'],
  'an image without a profile': [{ image: { name: 'plain', executable: '/usr/bin/curl' } }, 'image.profile'],
};

t.test('runner.run and runner.resume refuse each bad input field with RUN_INPUT_INVALID', async (t) => {
  t.plan(Object.keys(inputCases).length * 2 + 1);
  const broker = await createBroker();
  const store = openSqliteStore(':memory:');
  t.teardown(async () => {
    await broker.close();
    await store.close();
  });
  const runner = createRunner({ broker, store });
  for (const [name, [over, path]] of Object.entries(inputCases)) {
    const input = { ...good, ...over } as RunInput;
    await t.rejects(runner.run(input), { code: 'RUN_INPUT_INVALID', details: { path } }, name);
    await t.rejects(
      runner.resume('no-such-approval', input),
      { code: 'RUN_INPUT_INVALID', details: { path } },
      `${name} (resume)`,
    );
  }
  t.same(await store.listEvents(), [], 'nothing ran: no event was written');
});

t.test('createRunner refuses bad options with RUNNER_OPTIONS_INVALID', async (t) => {
  const broker = await createBroker();
  t.teardown(() => broker.close());
  const cases: Record<string, [opts: unknown, path: string]> = {
    'no broker': [{ store: openSqliteStore(':memory:') }, 'broker'],
    'no store': [{ broker }, 'store'],
    'minterFor not a function': [{ broker, store: openSqliteStore(':memory:'), minterFor: {} }, 'minterFor'],
  };
  t.plan(Object.keys(cases).length);
  for (const [name, [opts, path]] of Object.entries(cases))
    t.throws(
      () => createRunner(opts as RunnerOptions),
      { code: 'RUNNER_OPTIONS_INVALID', details: { path } },
      name,
    );
});
