/**
 * PostgreSQL stopped in the middle of a call, through the real runner: real curl, the real
 * broker, the mock vendor, a store on a cluster of the test's own that the vendor stops while
 * it answers one request. No request after the runner knows its record was lost reaches the
 * vendor; the call fails; new calls are refused until the database is back.
 */
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import type { BrokerError } from '../../src/errors.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { createRunner, type RunInput } from '../../src/runs/index.js';
import { openPostgresStore } from '../../src/store/postgres.js';
import { leakGuard } from '../helpers/leaks.js';
import { pgSkip, startCluster } from '../helpers/postgres.js';
import { atWrite, githubConnection, githubExtension, REAL_TOKEN } from '../runs/fixtures.js';

const skip = pgSkip();

function input(args: string[]): RunInput {
  return {
    extension: githubExtension,
    cli: 'curl',
    args,
    connection: githubConnection,
    tier: atWrite.tier,
    context: { kind: 'agent-step', tool: 'curl_cli', toolArgs: { argv: args } },
    deadlineMs: 60_000,
  };
}

async function rejection(p: Promise<unknown>): Promise<BrokerError> {
  try {
    await p;
  } catch (e) {
    return e as BrokerError;
  }
  throw new Error('expected the call to fail');
}

const url = (q: string) => `https://api.github.com/user?${q}`;

t.test(
  'PostgreSQL stopped mid-call: later requests are refused, the call fails, new calls wait for it',
  { skip, timeout: 120_000 },
  async (t) => {
    t.plan(8);
    const server = await startCluster();
    t.teardown(() => server.destroy());
    const answer = githubVendor({ token: REAL_TOKEN });
    const vendor = await startMockVendor((req) => {
      if (req.query.has('stop')) server.stop!('immediate');
      return answer(req);
    });
    t.teardown(() => vendor.close());
    const guard = leakGuard([REAL_TOKEN]);
    const broker = await createBroker({
      upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
      logger: guard.logger,
      onAudit: guard.onAudit,
    });
    // a short window: an unreachable database is reported within 300 ms
    const store = await openPostgresStore(server.urlOf('postgres'), {
      migrate: true,
      reconnectWindowMs: 300,
    });
    const runner = createRunner({ broker, store, logger: guard.logger });
    t.teardown(async () => {
      await broker.close();
      await store.close();
      guard.assertClean();
    });

    t.equal((await runner.run(input(['-sS', url('warm')]))).status, 'completed', 'a call before the stop');

    // one request a second: the runner hears of the lost write before the next one is sent
    const seen = vendor.log.length;
    const err = await rejection(
      runner.run(input(['-sS', '--rate', '1/s', url('first'), url('stop'), url('after=1'), url('after=2')])),
    );
    t.same(
      vendor.log.slice(seen).map((r) => r.query.toString()),
      ['first=', 'stop='],
      'the vendor sees no request after the write failed',
    );
    t.equal(err.code, 'STORE_UNAVAILABLE', 'the call fails with the store code, not completed');
    t.ok(Number(err.details?.['lostEvents']) >= 1, `lost events counted (${err.details?.['lostEvents']})`);
    const runId = String(err.details?.['runId']);

    const before = vendor.log.length;
    const refused = await rejection(runner.run(input(['-sS', url('while-down')])));
    t.equal(refused.code, 'STORE_UNAVAILABLE', 'a new call is refused while the database is down');
    t.equal(vendor.log.length, before, 'the refused call sent nothing');

    server.start!();
    const again = await runner.run(input(['-sS', url('back')]));
    t.equal(again.status, 'completed', 'with the database back, a call succeeds without a restart');
    t.match(
      (await store.listEvents({ runId, type: 'extension.execution.failed' })).map((e) => e.event),
      [{ code: 'STORE_UNAVAILABLE', lostEvents: Number(err.details?.['lostEvents']) }],
      'the failed call is on record once the database is back, with the count of what was lost',
    );
  },
);
