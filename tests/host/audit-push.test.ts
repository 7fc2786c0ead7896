/**
 * The audit push against a real local collector (an HTTP server collecting POSTs) over a real
 * SQLite store: events arrive batched and in store order, as valid OTLP logs carrying their
 * chain hashes; a full queue drops the oldest unsent and counts them; a collector that is down
 * and comes back gets what was queued; a refusal counts as failed and the next batch still
 * goes; a collector that hangs never holds an append; close flushes within its grace. The
 * store keeps every event throughout, and the header's secret never reaches a log line.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { type AuditPushOptions, AuditPush, pushingStore } from '../../src/host/audit-push.js';
import type { ChainSource } from '../../src/store/chain.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/types.js';
import { type Collector, startCollector } from '../helpers/collector.js';
import { otlpLogsProblems } from '../helpers/otlp-schema.js';
import { egress, execution } from '../store/fixtures/index.js';

const SECRET = 'otlp-api-key-5f0c2a9e7b3d41c8a6e2f1d0';

interface Rig {
  store: Store;
  push: AuditPush;
  collector: Collector;
  logs: () => string;
  /** resolves once the push's counters say so (re-checked as the collector answers and briefly) */
  settled(check: (s: ReturnType<AuditPush['stats']>) => boolean): Promise<void>;
}

async function rig(t: Test, over: Partial<AuditPushOptions> = {}, collector?: Collector): Promise<Rig> {
  const c = collector ?? (await startCollector());
  const raw = openSqliteStore(':memory:');
  const lines: string[] = [];
  const logger = pino(
    { level: 'trace' },
    new Writable({
      write(chunk, _e, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  );
  const push = new AuditPush({
    endpoint: c.url,
    headers: async () => ({ 'x-api-key': SECRET }),
    batchSize: 3,
    flushIntervalMs: 20,
    maxQueue: 100,
    retryForMs: 60_000,
    timeoutMs: 10_000,
    source: raw as Store & ChainSource,
    logger,
    ...over,
  });
  const store = pushingStore(raw, push);
  t.teardown(async () => {
    await push.close();
    await raw.close();
    await c.close();
  });
  return {
    store,
    push,
    collector: c,
    logs: () => lines.join(''),
    async settled(check) {
      while (!check(push.stats())) await new Promise((r) => setTimeout(r, 10));
    },
  };
}

/** Appends `n` events, alternating requests and calls; resolves to their seqs. */
async function append(store: Store, n: number): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < n; i++)
    seqs.push(await store.appendEvent(i % 2 === 0 ? egress({ path: `/r/${i}` }) : execution()));
  return seqs;
}

t.test('events arrive batched, in store order, as valid OTLP with their chain hashes', async (t) => {
  // an interval longer than the test: only full batches go, until close sends the rest
  const r = await rig(t, { flushIntervalMs: 60_000 });
  const seqs = await append(r.store, 7);
  await r.collector.until(() => r.collector.seqs().length === 6);
  t.same(
    r.collector.posts.map((p) => p.body.resourceLogs[0].scopeLogs[0].logRecords.length),
    [3, 3],
    'two full batches; the seventh waits',
  );
  t.match(await r.push.close(), { sent: 7, failed: 0, dropped: 0, queued: 0 }, 'close sends the last one');
  t.same(r.collector.seqs(), seqs, 'every event, in seq order');
  for (const p of r.collector.posts) {
    t.equal(p.path, '/v1/logs');
    t.equal(p.headers['content-type'], 'application/json');
    t.equal(p.headers['x-api-key'], SECRET, 'the configured header is sent');
    t.same(otlpLogsProblems(p.body), [], 'a valid ExportLogsServiceRequest');
  }
  const rows = await openedRows(r.store);
  const hashes = r.collector
    .records()
    .map(
      (rec: { attributes: { key: string; value: { stringValue?: string } }[] }) =>
        rec.attributes.find((a) => a.key === 'clibroker.hash')?.value.stringValue,
    );
  t.same(
    hashes,
    rows.map((x) => x.hash),
    'each record carries its stored hash',
  );
});

t.test('a batch that is not full goes after the flush interval', async (t) => {
  const r = await rig(t, { batchSize: 100, flushIntervalMs: 20 });
  const seqs = await append(r.store, 2);
  await r.collector.until(() => r.collector.seqs().length === 2);
  t.same(r.collector.seqs(), seqs);
});

async function openedRows(store: Store) {
  return (store as unknown as ChainSource).chainRows({ after: 0, limit: 100 });
}

t.test('a full queue drops the oldest unsent events and counts them; the store keeps all', async (t) => {
  const r = await rig(t, { batchSize: 1, maxQueue: 2 });
  r.collector.hang();
  const [first] = await append(r.store, 1);
  await r.collector.until(() => r.collector.held() === 1);
  // the first is in flight; four more fill a queue of two: the two oldest of them go
  const later = await append(r.store, 4);
  t.match(r.push.stats(), { dropped: 2, queued: 3 });
  r.collector.release();
  await r.collector.until(() => r.collector.seqs().length === 3);
  t.same(r.collector.seqs(), [first, ...later.slice(2)], 'the newest were kept');
  t.equal((await r.store.listEvents()).length, 5, 'the store has every event');
  await r.settled((s) => s.sent === 3);
  t.match(r.push.stats(), { sent: 3, dropped: 2, failed: 0 });
});

t.test('a collector down, then back: the queued events are delivered; one log line per burst', async (t) => {
  const c = await startCollector();
  await c.stop();
  const r = await rig(t, {}, c);
  const seqs = await append(r.store, 4);
  t.equal((await r.store.listEvents()).length, 4, 'every append stored while the collector is down');
  await r.settled(() => r.logs().includes('audit.push.failing'));
  await c.listen();
  await c.until(() => c.seqs().length === 4);
  t.same(c.seqs(), seqs, 'delivered in order once the collector is back');
  await r.settled((s) => s.sent === 4);
  t.match(r.push.stats(), { sent: 4, failed: 0, dropped: 0 });
  const logged = r.logs();
  t.equal(logged.split('audit.push.failing').length - 1, 1, 'one line when the burst starts');
  t.match(logged, /audit\.push\.recovered/, 'one when it ends');
  t.notOk(logged.includes(SECRET), "the header's secret is in no log line");
});

t.test('a refused batch counts as failed; the next batch still goes', async (t) => {
  const r = await rig(t, { batchSize: 2 });
  r.collector.status = 400;
  await append(r.store, 2);
  await r.settled((s) => s.failed === 2);
  r.collector.status = 200;
  const next = await append(r.store, 2);
  await r.collector.until(() => r.collector.seqs().length === 2);
  t.same(r.collector.seqs(), next);
  t.equal(r.collector.posts.length, 2, 'a 400 is not retried');
  await r.settled((s) => s.sent === 2);
  t.match(r.push.stats(), { sent: 2, failed: 2, dropped: 0 });
});

t.test('a hanging collector never holds an append; close gives up after its grace', async (t) => {
  const r = await rig(t, { batchSize: 1, closeGraceMs: 50 });
  r.collector.hang();
  await append(r.store, 1);
  await r.collector.until(() => r.collector.held() === 1);
  // the push is stuck on the first POST: appends still resolve, one after another
  const more = await append(r.store, 5);
  t.equal(more.length, 5);
  t.equal(r.collector.held(), 1, 'still unanswered after the appends resolved');
  const stats = await r.push.close();
  t.equal(r.collector.held(), 1, 'close returned while the collector still held the request');
  t.match(stats, { sent: 0, failed: 1, dropped: 5, queued: 0 });
  t.equal((await r.store.listEvents()).length, 6, 'the store has every event');
  t.match(r.logs(), /audit\.push\.stopped/);
});
