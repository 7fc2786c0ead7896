/**
 * A front door's token must be hard to guess (an estimated 128 bits or more): a weak one is
 * refused when the configuration loads (CONFIG_INVALID with a CONFIG_SECRET_WEAK problem), and
 * a token file rotated to a weak value closes the door at the next request, as an unreadable
 * token does (CONFIG_SECRET_UNAVAILABLE), until a strong one is written.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import type { OperatorConfig, SecretRef } from '../../src/config/types.js';
import type { BrokerError } from '../../src/errors.js';
import { seedDeployment } from '../helpers/seed.js';
import { serveFixture, TOKENS } from './helpers.js';

const WEAK = 'x';
const WEAK_LONG = 'reviewer-password'; // 17 characters, still guessable

async function refused(
  t: Test,
  over: (c: OperatorConfig, secret: (n: string, v: string) => SecretRef) => OperatorConfig,
) {
  const d = await seedDeployment((c, dir) => over(c, (n, v) => dir.secret(n, v)));
  t.teardown(() => d.close());
  const e = (await loadConfig(d.file).then(
    () => undefined,
    (x: unknown) => x,
  )) as BrokerError | undefined;
  t.equal(e?.code, 'CONFIG_INVALID', 'the load is refused');
  return e;
}

t.test('a weak reviewer token is refused at load', async (t) => {
  for (const weak of [WEAK, WEAK_LONG]) {
    const e = await refused(t, (c, secret) => ({
      ...c,
      serve: {
        executorToken: secret('executor', TOKENS.executor),
        reviewers: { alice: secret('alice', weak) },
      },
    }));
    t.match(e?.details?.['problems'], [{ code: 'CONFIG_SECRET_WEAK', path: 'serve.reviewers.alice' }]);
    t.equal(
      (e?.details?.['problems'] as unknown[] | undefined)?.length,
      1,
      'only the weak token is a problem',
    );
    if (weak === WEAK_LONG) t.notOk(JSON.stringify(e?.details).includes(weak), 'the token is not repeated');
    t.match(e?.message, /CONFIG_SECRET_WEAK/);
  }
});

t.test('every front door: the executor and MCP tokens, the daemon executor token', async (t) => {
  const e = await refused(t, (c, secret) => ({
    ...c,
    serve: {
      executorToken: secret('executor', 'exec-1'),
      mcpToken: secret('mcp', 'mcp-token-0123'),
      reviewers: { alice: secret('alice', TOKENS.alice) },
    },
    daemon: {
      socket: '/run/clibroker/d.sock',
      executorToken: secret('daemon', 'exec-e2e-7c1d9a4f2b8e6d3a5c0f'),
    },
  }));
  const paths = ((e?.details?.['problems'] ?? []) as { code: string; path: string }[])
    .filter((p) => p.code === 'CONFIG_SECRET_WEAK')
    .map((p) => p.path)
    .sort();
  t.same(paths, ['daemon.executorToken', 'serve.executorToken', 'serve.mcpToken']);
});

t.test('a token rotated to a weak value closes the door at the next request', async (t) => {
  const f = await serveFixture();
  t.teardown(() => f.stop().then(() => f.d.close()));
  t.equal((await f.call('GET', '/v1/approvals', TOKENS.alice)).status, 200, 'a strong token works');
  const file = (f.d.config.serve!.reviewers!['alice'] as { file: string }).file;
  writeFileSync(file, `${WEAK_LONG}\n`);
  const r = await f.call('GET', '/v1/approvals', WEAK_LONG);
  t.equal(r.status, 503, 'the rotated weak token is refused');
  t.equal(r.json.error.code, 'CONFIG_SECRET_UNAVAILABLE');
  t.equal(
    (await f.call('GET', '/v1/tools', TOKENS.executor)).status,
    503,
    'the server fails closed for every role until the token is fixed',
  );
  const strong = randomBytes(32).toString('hex');
  writeFileSync(file, `${strong}\n`);
  t.equal((await f.call('GET', '/v1/approvals', strong)).status, 200, 'a strong token works at once');
});

t.test("the daemon's executor token: rotated to a weak value, it cannot be read", async (t) => {
  const d = await seedDeployment((c, dir) => ({
    ...c,
    daemon: { socket: '/run/clibroker/d.sock', executorToken: dir.secret('daemon', TOKENS.executor) },
  }));
  t.teardown(() => d.close());
  const config = await loadConfig(d.file);
  t.equal(await config.executorToken(), TOKENS.executor);
  writeFileSync((d.config.daemon!.executorToken as { file: string }).file, 'changeme');
  const e = (await config.executorToken().catch((x: unknown) => x)) as BrokerError;
  t.equal(e.code, 'CONFIG_SECRET_UNAVAILABLE');
  t.match(e.details, { field: 'daemon.executorToken', reason: 'CONFIG_SECRET_WEAK' });
  t.notOk(e.message.includes('changeme'), 'the value is not shown');
});
