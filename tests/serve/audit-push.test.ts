/**
 * `clibroker serve` with `audit.otlp`: the seed deployment's curl run through the Platform
 * API against the mock vendor, its audit events pushed to a local collector (a real HTTP
 * server collecting POSTs). The events arrive in store order with their chain hashes; a
 * collector that hangs or is down never fails or holds a call, and never costs the store an
 * event; once it is back the queued events arrive. The header's secret reaches the collector
 * and no log line.
 */
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createHost, type Host } from '../../src/host/host.js';
import type { ChainSource } from '../../src/store/chain.js';
import { type HttpServer, startHttpServer } from '../../src/serve/http.js';
import { type Collector, startCollector } from '../helpers/collector.js';
import { leakGuard } from '../helpers/leaks.js';
import { otlpLogsProblems } from '../helpers/otlp-schema.js';
import { SEED_SECRETS, seedDeployment } from '../helpers/seed.js';
import { type Json, TOKENS } from './helpers.js';

const SECRET = 'collector-key-8d1e6b0f3a2c4e5d9f7a1b2c';

interface Fixture {
  host: Host;
  server: HttpServer;
  /** a curl run through the Platform API: GET https://api.atlassian.com/me */
  curl(): Promise<{ status: number; json: Json }>;
  /** the seqs the store holds, in order */
  stored(): Promise<{ seq: number; hash: string | null; type: string }[]>;
}

async function fixture(t: Test, collector: Collector): Promise<Fixture> {
  const guard = leakGuard([...SEED_SECRETS, SECRET]);
  const d = await seedDeployment((c, dir) => ({
    ...c,
    serve: { port: 0, executorToken: dir.secret('executor', TOKENS.executor) },
    audit: {
      otlp: {
        endpoint: collector.url,
        headers: { 'x-api-key': dir.secret('otlp', SECRET) },
        batchSize: 1,
        flushIntervalMs: 20,
      },
    },
  }));
  const config = await loadConfig(d.file);
  const host = await createHost(config, { logger: guard.logger });
  const server = await startHttpServer(host, host.store, {
    host: '127.0.0.1',
    port: 0,
    tokens: () => config.serveTokens(),
    approvalTimeoutMs: config.serve.approvalTimeoutMs,
    mcp: { cliTier: config.serve.cliTier, context: config.serve.context },
    logger: guard.logger,
  });
  t.teardown(async () => {
    await server.close();
    await host.close();
    await collector.close();
    await d.close();
    guard.assertClean();
  });
  return {
    host,
    server,
    async curl() {
      const r = await fetch(`${server.url}/v1/tools/execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKENS.executor}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          toolId: 'curl_cli',
          input: { args: ['-sS', 'https://api.atlassian.com/me'] },
        }),
      });
      return { status: r.status, json: await r.json() };
    },
    async stored() {
      const rows = await (host.store as unknown as ChainSource).chainRows({ after: 0, limit: 1000 });
      return rows.map((r) => ({ seq: Number(r.seq), hash: r.hash, type: r.type }));
    },
  };
}

function ok(t: Test, r: { status: number; json: Json }): void {
  t.equal(r.status, 200, JSON.stringify(r.json).slice(0, 400));
  t.match(r.json, { ok: true, result: { exitCode: 0 } });
}

t.test("a curl call's events reach the collector in store order, with their hashes", async (t) => {
  const collector = await startCollector();
  const f = await fixture(t, collector);
  ok(t, await f.curl());
  const stored = await f.stored();
  t.ok(
    stored.some((e) => e.type === 'egress.allowed'),
    'the request is stored',
  );
  t.ok(
    stored.some((e) => e.type === 'extension.execution.succeeded'),
    'the call is stored',
  );
  await collector.until(() => collector.seqs().length === stored.length);
  t.same(
    collector.seqs(),
    stored.map((e) => e.seq),
    'every stored event, in order',
  );
  const hashes = collector
    .records()
    .map((r: Json) => r.attributes.find((a: Json) => a.key === 'clibroker.hash').value.stringValue);
  t.same(
    hashes,
    stored.map((e) => e.hash),
  );
  for (const p of collector.posts) {
    t.same(otlpLogsProblems(p.body), [], 'a valid ExportLogsServiceRequest');
    t.equal(p.headers['x-api-key'], SECRET);
  }
});

t.test('a hanging collector holds no call; released, it gets every event', async (t) => {
  const collector = await startCollector();
  collector.hang();
  const f = await fixture(t, collector);
  ok(t, await f.curl());
  await collector.until(() => collector.held() === 1);
  // the push waits on the first POST; the next call runs and answers all the same
  ok(t, await f.curl());
  t.same(collector.seqs(), [], 'the collector answered nothing while both calls completed');
  const stored = await f.stored();
  t.equal(stored.filter((e) => e.type === 'extension.execution.succeeded').length, 2, 'both calls stored');
  collector.release();
  await collector.until(() => collector.seqs().length === stored.length);
  t.same(
    collector.seqs(),
    stored.map((e) => e.seq),
  );
});

t.test('a collector that is down fails no call; back, it gets the queued events', async (t) => {
  const collector = await startCollector();
  await collector.stop();
  const f = await fixture(t, collector);
  ok(t, await f.curl());
  ok(t, await f.curl());
  const stored = await f.stored();
  t.equal(stored.filter((e) => e.type === 'extension.execution.succeeded').length, 2, 'both calls stored');
  await collector.listen();
  await collector.until(() => collector.seqs().length === stored.length);
  t.same(
    collector.seqs(),
    stored.map((e) => e.seq),
    'delivered in order once back',
  );
});
