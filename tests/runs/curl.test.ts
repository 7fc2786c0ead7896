import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { isolatedSkip } from '../helpers/bwrap.js';
import { curlCli } from '../../src/manifest/examples.js';
import { atWrite, githubExtension, REAL_TOKEN, runFixture } from './fixtures.js';

t.test(
  'curl: a method-override header is stripped; the vendor sees a plain GET with the real token',
  async (t) => {
    const f = await runFixture(t);
    const r = await f.runner.run(
      f.input('curl', [
        '-sS',
        '-H',
        'X-HTTP-Method-Override: DELETE',
        '-H',
        'Authorization: token placeholder',
        'https://api.github.com/user',
      ]),
    );
    t.equal(r.status, 'completed', r.stderr);
    t.equal(JSON.parse(r.stdout).login, 'octocat');
    t.equal(f.vendor.log[0]!.method, 'GET');
    t.notOk(f.vendor.log[0]!.headers['x-http-method-override']);
    t.equal(f.vendor.log[0]!.headers.authorization, `token ${REAL_TOKEN}`);
  },
);

t.test('curl: an upload over the cap is refused and nothing reaches the vendor', async (t) => {
  const f = await runFixture(t);
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-run-'));
  const big = join(dir, 'big.bin');
  writeFileSync(big, Buffer.alloc(8 * 1024 * 1024 + 1, 1));
  // The sandbox's HOME is fresh, but the file path is readable: curl runs with the host filesystem (plain profile).
  const r = await f.runner.run(
    f.input(
      'curl',
      ['-sS', '-f', '-T', big, 'https://api.github.com/repos/acme/app/releases/1/assets'],
      atWrite,
    ),
  );
  t.equal(r.status, 'refused');
  if (r.status === 'refused') t.equal(r.refusal.code, 'CLI_UPLOAD_TOO_LARGE');
  t.equal(f.vendor.log.length, 0);
});

t.test('curl: a WebSocket upgrade is refused', async (t) => {
  const f = await runFixture(t);
  const r = await f.runner.run(
    f.input(
      'curl',
      [
        '-sS',
        '-f',
        '--http1.1',
        '-H',
        'Connection: Upgrade',
        '-H',
        'Upgrade: websocket',
        '-H',
        'Sec-WebSocket-Version: 13',
        '-H',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        'https://api.github.com/socket',
      ],
      atWrite,
    ),
  );
  t.equal(r.status, 'refused');
  if (r.status === 'refused') t.equal(r.refusal.code, 'CLI_UPGRADE_REFUSED');
  t.equal(f.vendor.log.length, 0);
});

t.test('curl at tier read: a GraphQL mutation is refused, a query passes', async (t) => {
  const f = await runFixture(t);
  const gql = (q: string) => [
    '-sS',
    '-f',
    '-X',
    'POST',
    '-H',
    'content-type: application/json',
    '--data',
    JSON.stringify({ query: q }),
    'https://api.github.com/graphql',
  ];
  const mutation = await f.runner.run(
    f.input('curl', gql('mutation { addStar(input: {starrableId: "x"}) { clientMutationId } }')),
  );
  t.equal(mutation.status, 'refused');
  if (mutation.status === 'refused') t.equal(mutation.refusal.policyCode, 'CLI_REQUEST_TIER_DENIED');
  const query = await f.runner.run(f.input('curl', gql('query { viewer { login } }')));
  t.equal(query.status, 'completed', query.stderr);
  t.same(JSON.parse(query.stdout), { data: { viewer: { login: 'octocat' } } });
  t.equal(f.vendor.log.length, 1, 'only the query reached the vendor');
});

t.test(
  'a destructive request after a write in the same command: CLI_CONFIRMATION_AFTER_WRITE, the write recorded unknown',
  async (t) => {
    const f = await runFixture(t);
    const r = await f.runner.run(
      f.input(
        'curl',
        [
          '-sS',
          '-f',
          '-X',
          'POST',
          '--data',
          '{"title":"x"}',
          'https://api.github.com/repos/acme/app/issues',
          '--next',
          '-sS',
          '-f',
          '-X',
          'DELETE',
          'https://api.github.com/repos/acme/app',
        ],
        atWrite,
      ),
    );
    t.equal(r.status, 'refused');
    if (r.status === 'refused') {
      t.equal(r.refusal.code, 'CLI_CONFIRMATION_AFTER_WRITE', 'the call fails with the rule itself');
      // the agent is told which write has an unknown outcome, and to check it with a read
      t.match(
        r.refusal.message,
        /POST api\.github\.com\/repos\/acme\/app\/issues is unknown: check with a read/,
      );
    }
    t.same(r.unknownOutcomes, [{ method: 'POST', host: 'api.github.com', path: '/repos/acme/app/issues' }]);
    t.equal(r.outcomeUnknown, true);
    const run = (await f.store.listEvents({ runId: r.runId, type: 'extension.execution.failed' }))[0]?.event;
    t.match(run, {
      code: 'CLI_CONFIRMATION_AFTER_WRITE',
      outcome: 'unknown',
      unknownOutcomes: [{ method: 'POST', host: 'api.github.com', path: '/repos/acme/app/issues' }],
    });
    t.same(
      f.vendor.log.map((x) => x.method),
      ['POST'],
      'the DELETE was not sent',
    );
    t.equal((await f.store.listApprovals()).length, 0, 'no approval: re-running would repeat the POST');
  },
);

t.test('a destructive request whose body cannot be shown: CLI_CONFIRMATION_UNREVIEWABLE', async (t) => {
  const f = await runFixture(t);
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-run-'));
  const bin = join(dir, 'body.bin');
  writeFileSync(bin, Buffer.from([0, 1, 2, 3, 255, 254, 0, 0]));
  const r = await f.runner.run(
    f.input(
      'curl',
      [
        '-sS',
        '-f',
        '-X',
        'DELETE',
        '-H',
        'content-type: application/octet-stream',
        '--data-binary',
        `@${bin}`,
        'https://api.github.com/repos/acme/app',
      ],
      atWrite,
    ),
  );
  t.equal(r.status, 'refused');
  if (r.status === 'refused') t.equal(r.refusal.code, 'CLI_CONFIRMATION_UNREVIEWABLE');
  t.equal(f.vendor.log.length, 0);
});

t.test('a destructive request with a JSON body pauses with a redacted body preview', async (t) => {
  const f = await runFixture(t);
  const body = JSON.stringify({ reason: 'cleanup', token: 'ghp_abcdefghijklmnopqrstuvwxyz012345' });
  const r = await f.runner.run(
    f.input(
      'curl',
      [
        '-sS',
        '-f',
        '-X',
        'DELETE',
        '-H',
        'content-type: application/json',
        '--data',
        body,
        'https://api.github.com/repos/acme/app',
      ],
      atWrite,
    ),
  );
  t.equal(r.status, 'paused');
  if (r.status !== 'paused') return;
  t.match(r.approval.bodyPreview, /"reason":"cleanup"/);
  t.notMatch(r.approval.bodyPreview, /ghp_abcdef/, 'secret-shaped values are redacted in the preview');
  t.equal(f.vendor.log.length, 0);
});

// Without -f curl exits 0 on a 4xx: a policy refusal must still decide the call.
t.test(
  'a policy refusal fails the call whatever the exit code: curl without -f exits 0 on each refusal',
  async (t) => {
    const f = await runFixture(t, { limits: { maxRequests: 2 } });
    const dir = mkdtempSync(join(tmpdir(), 'clibroker-run-'));
    const big = join(dir, 'big.bin');
    writeFileSync(big, Buffer.alloc(8 * 1024 * 1024 + 1, 1));
    const cases: Record<string, { args: string[]; write?: boolean; code: string }> = {
      'a write at tier read': {
        args: [
          '-sS',
          '-X',
          'POST',
          '--data',
          '{"title":"x"}',
          'https://api.github.com/repos/acme/app/issues',
        ],
        code: 'CLI_REQUEST_TIER_DENIED',
      },
      'a GraphQL mutation at tier read': {
        args: [
          '-sS',
          '-H',
          'content-type: application/json',
          '--data',
          JSON.stringify({ query: 'mutation { addStar(input: {starrableId: "x"}) { clientMutationId } }' }),
          'https://api.github.com/graphql',
        ],
        code: 'CLI_REQUEST_TIER_DENIED',
      },
      'a DELETE after a POST (curl -X POST … --next -X DELETE …)': {
        args: [
          '-sS',
          '-X',
          'POST',
          '--data',
          '{"title":"x"}',
          'https://api.github.com/repos/acme/app/issues',
          '--next',
          '-sS',
          '-X',
          'DELETE',
          'https://api.github.com/repos/acme/app',
        ],
        write: true,
        code: 'CLI_CONFIRMATION_AFTER_WRITE',
      },
      'a destructive request outside an agent step': {
        args: ['-sS', '-X', 'DELETE', 'https://api.github.com/repos/acme/app'],
        write: true,
        code: 'CLI_CONFIRMATION_REQUIRED',
      },
      'an upload over the cap': {
        args: ['-sS', '-T', big, 'https://api.github.com/repos/acme/app/releases/1/assets'],
        write: true,
        code: 'CLI_UPLOAD_TOO_LARGE',
      },
      'the third request over a budget of two': {
        args: [
          '-sS',
          'https://api.github.com/user',
          'https://api.github.com/user',
          'https://api.github.com/user',
        ],
        code: 'CLI_REQUEST_BUDGET_EXCEEDED',
      },
      'a WebSocket upgrade': {
        args: [
          '-sS',
          '--http1.1',
          '-H',
          'Connection: Upgrade',
          '-H',
          'Upgrade: websocket',
          '-H',
          'Sec-WebSocket-Version: 13',
          '-H',
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
          'https://api.github.com/socket',
        ],
        code: 'CLI_UPGRADE_REFUSED',
      },
      'a request the client signed': {
        args: ['-sS', 'https://api.github.com/user?X-Amz-Signature=abc'],
        code: 'CLI_REQUEST_SIGNING_UNSUPPORTED',
      },
      'a Host header naming another host': {
        args: ['-sS', '-H', 'Host: evil.example.com', 'https://api.github.com/user'],
        code: 'CLI_HOST_MISMATCH',
      },
    };
    // Refused at CONNECT, before any response: curl exits non-zero anyway; listed so the whole class is covered.
    const failing: Record<string, { args: string[]; code: string }> = {
      'a port other than 443': {
        args: ['-sS', 'https://api.github.com:8443/user'],
        code: 'CLI_PORT_REFUSED',
      },
    };
    t.plan(Object.keys(cases).length * 3 + Object.keys(failing).length);
    for (const [name, c] of Object.entries(failing)) {
      const r = await f.runner.run(f.input('curl', c.args));
      t.match(
        r,
        { status: 'refused', refusal: { code: c.code } },
        `${name}: refused with ${c.code} (curl exit ${r.exitCode})`,
      );
    }
    for (const [name, c] of Object.entries(cases)) {
      const r = await f.runner.run(
        f.input(
          'curl',
          c.args,
          c.write
            ? {
                ...atWrite,
                ...(c.code === 'CLI_CONFIRMATION_REQUIRED' ? { context: { kind: 'scheduled' } } : {}),
              }
            : {},
        ),
      );
      t.match(r, { status: 'refused', exitCode: 0 }, `${name}: refused, although curl exited 0`);
      t.equal(
        r.status === 'refused' ? (r.refusal.policyCode ?? r.refusal.code) : r.status,
        c.code,
        `${name}: ${c.code}`,
      );
      const ev = await f.store.listEvents({
        runId: r.runId,
        type: ['extension.execution.succeeded', 'extension.execution.failed'],
      });
      t.match(
        ev.map((e) => e.event),
        [{ type: 'extension.execution.failed', code: c.code }],
        `${name}: one execution.failed event with the code`,
      );
    }
  },
);

t.test('several refusals: the first policy refusal is reported, and all are listed in order', async (t) => {
  const f = await runFixture(t);
  const r = await f.runner.run(
    f.input('curl', [
      '-sS',
      'https://outside.example.com/ping',
      '--next',
      '-sS',
      '-X',
      'POST',
      '--data',
      '{"title":"x"}',
      'https://api.github.com/repos/acme/app/issues',
      '--next',
      '-sS',
      '-X',
      'PATCH',
      '--data',
      '{}',
      'https://api.github.com/repos/acme/app',
      '--next',
      '-sS',
      'https://api.github.com/user',
    ]),
  );
  t.equal(r.status, 'refused', `curl exit ${r.exitCode}`);
  if (r.status === 'refused')
    t.match(
      r.refusal,
      { policyCode: 'CLI_REQUEST_TIER_DENIED', method: 'POST', path: '/repos/acme/app/issues' },
      'the first policy refusal, not the egress refusal before it',
    );
  t.same(
    r.refusals.map((x) => [x.policyCode ?? x.code, x.method]),
    [
      ['CLI_EGRESS_HOST_DENIED', 'GET'],
      ['CLI_REQUEST_TIER_DENIED', 'POST'],
      ['CLI_REQUEST_TIER_DENIED', 'PATCH'],
    ],
  );
  t.same(
    f.vendor.log.map((x) => x.method),
    ['GET'],
    'only the read was sent',
  );
});

t.test(
  'a host outside egress is the one refusal a CLI that succeeded outlives; when the CLI fails it is reported',
  async (t) => {
    const f = await runFixture(t);
    // curl's exit code is its last transfer's: the blocked phone-home first, then the real work.
    const outlived = await f.runner.run(
      f.input('curl', [
        '-sS',
        'https://telemetry.example.com/ping',
        '--next',
        '-sS',
        'https://api.github.com/user',
      ]),
    );
    t.match(outlived, { status: 'completed', exitCode: 0 }, outlived.stderr);
    t.match(
      outlived.refusals,
      [{ policyCode: 'CLI_EGRESS_HOST_DENIED', host: 'telemetry.example.com' }],
      'still listed',
    );
    t.match(outlived.stdout, /"login":"octocat"/);
    const ev = await f.store.listEvents({
      runId: outlived.runId,
      type: ['extension.execution.succeeded', 'extension.execution.failed'],
    });
    t.match(
      ev.map((e) => e.event.type),
      ['extension.execution.succeeded'],
    );

    const failed = await f.runner.run(
      f.input('curl', [
        '-sS',
        'https://api.github.com/user',
        '--next',
        '-sS',
        '-f',
        'https://telemetry.example.com/ping',
      ]),
    );
    t.equal(failed.exitCode, 22, 'curl -f failed on the 422');
    t.equal(failed.status, 'refused');
    if (failed.status === 'refused')
      t.match(failed.refusal, { policyCode: 'CLI_EGRESS_HOST_DENIED', host: 'telemetry.example.com' });
  },
);

// bwrap missing or refused: the file fails under CI, the isolated case is skipped with why elsewhere
const noBwrap = await isolatedSkip();
for (const image of ['plain', 'isolated'] as const) {
  t.test(
    `${image}: curl streaming a 3.5 MiB download to stdout: delivered, cut at exactly 2 MiB, truncated`,
    { skip: image === 'isolated' && noBwrap },
    async (t) => {
      const f = await runFixture(t);
      const ext = {
        ...githubExtension,
        clis: [curlCli({ image })],
      };
      // A request first, then the download: the isolated profile's bridge has carried a connection before the fast write.
      const r = await f.runner.run({
        ...f.input('curl', [
          '-sS',
          '-o',
          '/dev/null',
          'https://api.github.com/user',
          '--next',
          '-sS',
          'https://api.github.com/repos/acme/app/tarball/main',
        ]),
        extension: ext,
      });
      t.equal(r.profile, image);
      t.match(r, { status: 'completed', exitCode: 0, truncated: true, stderr: '' }, r.stderr.slice(0, 300));
      t.equal(Buffer.byteLength(r.stdout), 2 * 1024 * 1024, 'exactly the cap');
      t.match(r.stdout, /^x+$/);
      t.equal(f.vendor.log.length, 2);
    },
  );
}
