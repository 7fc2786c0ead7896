/**
 * Real gh (Debian's 2.23) through the runner with a GitHub App connection, against the
 * embedded GitHub-like vendor in app mode: it verifies the app's JWT against the app's public
 * key, mints installation tokens holding the permissions asked for, and enforces them on its
 * routes as GitHub does (403 "Resource not accessible by integration").
 *
 * What the vendor refusing a write shows, honestly: the broker's policy and the token are
 * two separate locks. Two demonstrations keep them apart.
 * - The read call's token, taken from the vendor's record of what it minted, is sent straight
 *   to the vendor (no broker in between) on a write route: the vendor refuses it with 403. A
 *   read call's credential cannot write even if the policy were bypassed.
 * - gh at tier write, whose configured write set lacks `issues`: the broker allows the
 *   mutation (the tier is write), and the vendor refuses it, because the token minted for the
 *   call was narrowed to that set.
 */
import { request } from 'node:https';
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import type { AuditEvent } from '../../src/broker/types.js';
import type { GithubAppConnection } from '../../src/credentials/types.js';
import { createRunner } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import { routeToMock, startMockVendor, type TestVendor } from '../../src/testing/index.js';
import { leakGuard } from '../helpers/leaks.js';
import { atWrite, githubExtension } from './fixtures.js';

const READ_SET = { contents: 'read', issues: 'read', pull_requests: 'read', metadata: 'read' };
const WRITE_SET = { contents: 'write', issues: 'write', pull_requests: 'write', metadata: 'read' };

async function appFixture(
  t: { teardown(fn: () => unknown): void },
  connectionOver: Partial<GithubAppConnection> = {},
) {
  const vendor = await startMockVendor({ app: true });
  const connection = { ...(vendor.connection as GithubAppConnection), ...connectionOver };
  const events: AuditEvent[] = [];
  const guard = leakGuard([connection.privateKey]);
  const broker = await createBroker({
    upstream: routeToMock(vendor),
    logger: guard.logger,
    onAudit: (e) => {
      events.push(e);
      guard.onAudit(e);
    },
  });
  const store = openSqliteStore(':memory:');
  const runner = createRunner({ broker, store, logger: guard.logger });
  const outputs: string[] = [];
  t.teardown(async () => {
    await broker.close();
    await vendor.close();
    // every token minted and every app JWT presented is a secret too
    guard.watch(...vendor.installationTokens.map((m) => m.token), ...appJwts(vendor));
    guard.watch(...connection.privateKey.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----')));
    for (const e of await store.listEvents({ limit: 10_000 })) guard.onAudit(e.event as never);
    for (const o of outputs) guard.onAudit({ output: o } as never);
    await store.close();
    guard.assertClean();
  });
  const run = async (args: string[], over = {}) => {
    const r = await runner.run({
      extension: githubExtension,
      cli: 'gh',
      args,
      connection,
      tier: {
        requested: 'read',
        organizationCeiling: 'write',
        assignmentAllow: 'write',
        identity: 'assigned',
      },
      context: { kind: 'agent-step', tool: 'gh_cli', toolArgs: { args } },
      deadlineMs: 60_000,
      ...over,
    });
    outputs.push(r.stdout, r.stderr);
    return r;
  };
  const exchanges = () => vendor.log.filter((r) => r.path === '/app/installations/2002/access_tokens').length;
  const execution = async (runId: string) =>
    (await store.listEvents({ runId }))
      .map((e) => e.event)
      .find((e) => e.type.startsWith('extension.execution'));
  return { vendor, connection, run, exchanges, execution, events };
}

function appJwts(vendor: TestVendor): string[] {
  return vendor.log
    .filter((r) => r.path.endsWith('/access_tokens'))
    .map((r) => String(r.headers.authorization).replace(/^Bearer /, ''));
}

/** A request sent straight to the mock vendor (as api.github.com), bypassing the broker. */
function direct(
  vendor: TestVendor,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: { message?: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: vendor.port,
        servername: 'api.github.com',
        ca: vendor.caPem,
        method,
        path,
        headers: {
          host: 'api.github.com',
          authorization: `token ${token}`,
          'content-type': 'application/json',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString() || '{}'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

t.test(
  'gh at tier read gets a read-only token, at tier write a write token; the audit records each',
  async (t) => {
    const f = await appFixture(t);
    const read = await f.run(['issue', 'list', '--repo', 'acme/app']);
    t.equal(read.status, 'completed', read.stderr);
    t.match(read.stdout, /^12\tOPEN\tCrash on start/);
    t.equal(f.vendor.installationTokens.length, 1);
    const readToken = f.vendor.installationTokens[0]!;
    t.same(readToken.permissions, READ_SET, 'the read tier asked for read levels only');
    const graph = f.vendor.log.filter((r) => r.path === '/graphql');
    t.ok(graph.length > 0);
    t.ok(
      graph.every((r) => r.headers.authorization === `token ${readToken.token}`),
      "gh's requests carried the read token",
    );
    t.match(await f.execution(read.runId), {
      cliTier: 'read',
      mintedToken: {
        kind: 'github_app',
        tier: 'read',
        permissions: READ_SET,
        expiresAt: new Date(readToken.expiresAt).toISOString(),
      },
    });

    const write = await f.run(
      ['issue', 'create', '--repo', 'acme/app', '--title', 'x', '--body', 'y'],
      atWrite,
    );
    t.equal(write.status, 'completed', write.stderr);
    t.equal(write.stdout.trim(), 'https://github.com/acme/app/issues/13');
    t.equal(f.vendor.installationTokens.length, 2);
    const writeToken = f.vendor.installationTokens[1]!;
    t.same(writeToken.permissions, WRITE_SET);
    t.not(writeToken.token, readToken.token, 'the tiers never share a token');
    const mutation = f.vendor.log.find((r) => r.body.toString().includes('createIssue'))!;
    t.equal(mutation.headers.authorization, `token ${writeToken.token}`);
    t.match(await f.execution(write.runId), {
      cliTier: 'write',
      mintedToken: {
        kind: 'github_app',
        tier: 'write',
        permissions: WRITE_SET,
        expiresAt: new Date(writeToken.expiresAt).toISOString(),
      },
    });
  },
);

t.test("the read call's token cannot write: the vendor refuses it, with no broker in between", async (t) => {
  const f = await appFixture(t);
  const read = await f.run(['api', 'repos/acme/app/issues']);
  t.equal(read.status, 'completed', read.stderr);
  const readToken = f.vendor.installationTokens[0]!.token;
  const denied = await direct(f.vendor, 'POST', '/repos/acme/app/issues', readToken, { title: 'x' });
  t.equal(denied.status, 403);
  t.equal(denied.body.message, 'Resource not accessible by integration');
  // the same request with the read token on a read route, and with a write token, goes through
  t.equal((await direct(f.vendor, 'GET', '/repos/acme/app/issues', readToken)).status, 200);
  const write = await f.run(['api', 'repos/acme/app/issues'], atWrite);
  t.equal(write.status, 'completed', write.stderr);
  const writeToken = f.vendor.installationTokens[1]!.token;
  t.equal((await direct(f.vendor, 'POST', '/repos/acme/app/issues', writeToken, { title: 'x' })).status, 201);
});

t.test(
  'gh at tier write with a write set lacking issues: the broker allows, the vendor refuses',
  async (t) => {
    const f = await appFixture(t, { permissions: { write: { contents: 'write', metadata: 'read' } } });
    const r = await f.run(['issue', 'create', '--repo', 'acme/app', '--title', 'x', '--body', 'y'], atWrite);
    t.not(r.exitCode, 0, 'gh failed');
    t.match(r.stderr, /Resource not accessible by integration/, "gh printed the vendor's refusal");
    const mutation = f.events.find((e) => e.path === '/graphql' && e.class === 'write');
    t.match(mutation, { decision: 'allow' }, 'the policy let the mutation through');
    t.same(f.vendor.installationTokens[0]!.permissions, { contents: 'write', metadata: 'read' });
  },
);

t.test('tokens are cached: two calls at one tier mint once; read and write mint separately', async (t) => {
  const f = await appFixture(t);
  for (const _ of [1, 2]) {
    const r = await f.run(['issue', 'list', '--repo', 'acme/app']);
    t.equal(r.status, 'completed', r.stderr);
  }
  t.equal(f.exchanges(), 1, 'two read calls, one exchange');
  for (const _ of [1, 2]) {
    const r = await f.run(['issue', 'list', '--repo', 'acme/app'], atWrite);
    t.equal(r.status, 'completed', r.stderr);
  }
  t.equal(f.exchanges(), 2, 'the write tier minted its own token, once');
  t.same(
    f.vendor.installationTokens.map((m) => m.permissions.issues),
    ['read', 'write'],
  );
});

t.test('repositories narrow every token; no secret reaches the output, the audit or the log', async (t) => {
  const f = await appFixture(t, { repositories: ['app'] });
  const r = await f.run(['api', 'repos/acme/app']);
  t.equal(r.status, 'completed', r.stderr);
  t.same(f.vendor.installationTokens[0]!.repositories, ['app']);
  t.match(await f.execution(r.runId), { mintedToken: { tier: 'read', repositories: ['app'] } });
  const other = await f.run(['api', 'repos/acme/other']);
  t.not(other.exitCode, 0, 'a repository outside the set is not found');
  t.match(other.stderr, /Not Found/);
  // The leak guard checks at teardown; checked here too, so the test names what it looked for.
  const secrets = [
    f.connection.privateKey,
    ...f.vendor.installationTokens.map((m) => m.token),
    ...appJwts(f.vendor),
  ];
  for (const out of [r.stdout, r.stderr, other.stdout, other.stderr, JSON.stringify(f.events)])
    t.notOk(
      secrets.some((s) => out.includes(s)),
      'no private key, JWT or token',
    );
});
