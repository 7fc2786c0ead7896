/**
 * The `audit.otlp` block through `loadConfig`: its defaults, the header values read from
 * their secret references (present at load, their files hidden from the CLI), and what is
 * refused — a header's value written inline (never shown), headers over plain http to another
 * machine, an endpoint with credentials or a query, a header the push writes itself.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { makeFixture, rejection } from './fixtures.js';

const KEY = 'collector-key-0d9e8f7a6b5c4d3e2f1a0b9c';

t.test('defaults, and the header values read from their references', async (t) => {
  const f = makeFixture(t);
  writeFileSync(join(f.dir, 'otlp.key'), `${KEY}\n`, { mode: 0o600 });
  f.config.audit = {
    otlp: { endpoint: 'https://collector.internal:4318', headers: { 'x-api-key': { file: 'otlp.key' } } },
  };
  const c = await loadConfig(f.write(), { env: f.env });
  t.match(c.auditOtlp, {
    endpoint: 'https://collector.internal:4318',
    batchSize: 512,
    flushIntervalMs: 1000,
    maxQueue: 10_000,
    retryForMs: 60_000,
    timeoutMs: 10_000,
    headers: { 'x-api-key': { file: join(f.dir, 'otlp.key') } },
  });
  t.same(await c.auditOtlp!.readHeaders(), { 'x-api-key': KEY });
  t.ok(c.hiddenPaths.includes(join(f.dir, 'otlp.key')), "the header's file is hidden from the CLI");
  const none = makeFixture(t);
  t.equal((await loadConfig(none.write(), { env: none.env })).auditOtlp, undefined, 'absent: no push');
});

const refused: [name: string, otlp: unknown, code: string, path: string][] = [
  [
    'a header value written inline',
    { endpoint: 'https://collector.internal:4318', headers: { 'x-api-key': KEY } },
    'CONFIG_SECRET_INLINE',
    'audit.otlp.headers["x-api-key"]',
  ],
  [
    'headers over http to another machine',
    { endpoint: 'http://collector.internal:4318', headers: { 'x-api-key': { env: 'OTLP_KEY' } } },
    'CONFIG_FIELD_INVALID',
    'audit.otlp.headers',
  ],
  [
    'an endpoint with a password',
    { endpoint: `https://u:${KEY}@collector.internal:4318` },
    'CONFIG_FIELD_INVALID',
    'audit.otlp.endpoint',
  ],
  [
    'an endpoint with a query',
    { endpoint: 'https://collector.internal/?a=1' },
    'CONFIG_FIELD_INVALID',
    'audit.otlp.endpoint',
  ],
  ['not http', { endpoint: 'grpc://collector.internal:4317' }, 'CONFIG_FIELD_INVALID', 'audit.otlp.endpoint'],
  [
    'a header the push writes',
    { endpoint: 'https://collector.internal', headers: { 'Content-Type': { env: 'OTLP_KEY' } } },
    'CONFIG_FIELD_INVALID',
    'audit.otlp.headers["Content-Type"]',
  ],
  [
    'a batch of none',
    { endpoint: 'https://collector.internal', batchSize: 0 },
    'CONFIG_FIELD_INVALID',
    'audit.otlp.batchSize',
  ],
  [
    'an unknown field',
    { endpoint: 'https://collector.internal', batchsize: 5 },
    'CONFIG_FIELD_UNKNOWN',
    'audit.otlp.batchsize',
  ],
];

t.test('refused', async (t) => {
  t.plan(refused.length * 3);
  for (const [name, otlp, code, path] of refused) {
    const f = makeFixture(t);
    f.env['OTLP_KEY'] = 'a-key-from-the-environment-0123456789';
    f.config.audit = { otlp };
    const e = await rejection(loadConfig(f.write(), { env: f.env }));
    const problems = (e.details?.['problems'] ?? []) as { code: string; path: string }[];
    t.ok(
      problems.some((p) => p.code === code && p.path === path),
      `${name}: ${code} at ${path} (${JSON.stringify(problems)})`,
    );
    t.notOk(JSON.stringify(e).includes(KEY), `${name}: the key is never shown`);
    t.equal(e.code, 'CONFIG_INVALID', name);
  }
});

t.test('http to this machine may carry headers', async (t) => {
  const f = makeFixture(t);
  f.env['OTLP_KEY'] = 'a-key-from-the-environment-0123456789';
  f.config.audit = {
    otlp: { endpoint: 'http://127.0.0.1:4318', headers: { authorization: { env: 'OTLP_KEY' } } },
  };
  const c = await loadConfig(f.write(), { env: f.env });
  t.same(await c.auditOtlp!.readHeaders(), { authorization: 'a-key-from-the-environment-0123456789' });
});
