/**
 * The new bundled commands through the real spawned binary, as agents run them: `vendor
 * run` with real curl (the CLI starts the embedded mock vendor itself when
 * CLIBROKER_MOCK_VENDOR=github — a broker inside a spawned process cannot take a test's
 * `upstream.resolve`), the approval cycle across separate processes sharing a store file,
 * `audit query`, the errors with their envelopes and exit codes, and `demo`.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { isErrorCode } from '../../src/errors.js';
import { buildBinary, spawnWith } from './fixtures/helpers.js';
import { CONNECTION_JSON, GRAPHQL_FROM_STDIN, MANIFEST_JSON, TOKEN } from './fixtures/vendor.js';

const { bin } = await buildBinary();
const work = mkdtempSync(join(tmpdir(), 'clibroker-cli-vendor-'));
t.teardown(() => {
  rmSync(dirname(dirname(bin)), { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

const store = join(work, 'state', 'store.db');
const env = {
  CLIBROKER_CONNECTION: CONNECTION_JSON,
  CLIBROKER_MOCK_VENDOR: 'github',
  HOME: join(work, 'home'),
};
const cb = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
  spawnWith(bin, args, { input: opts.input ?? '', env: opts.env ?? env });
const run = (
  vendorArgs: string[],
  flags: string[] = [],
  opts: { input?: string; env?: Record<string, string> } = {},
) =>
  cb(
    [
      'vendor',
      'run',
      '--store',
      store,
      '--manifest',
      MANIFEST_JSON,
      '--cli',
      'curl',
      ...flags,
      '--',
      ...vendorArgs,
    ],
    opts,
  );
const atWrite = ['--tier', 'write'];
/** A person turns on "Allow writes" for github's curl in the default assignment (audited). */
const allowWrites = () =>
  cb([
    'tiers',
    'set',
    '--store',
    store,
    '--extension',
    'github',
    '--cli',
    'curl',
    '--tier',
    'write',
    '--by',
    'admin@example.com',
  ]);
const DELETE = ['-sS', '-X', 'DELETE', 'https://api.github.com/repos/acme/app'];

type TestLike = Pick<Test, 'equal' | 'match'>;

/** Every failure: exit 1 (or given), one JSON line carrying a catalogue code, one prose line on stderr. */
function failed(t: TestLike, r: ReturnType<typeof cb>, type: string, code = 1) {
  t.equal(r.code, code, `exit ${code}`);
  t.match(r.env, { success: false, error: { type } });
  const errorCode = r.env?.success === false ? r.env.error.code : undefined;
  t.equal(
    errorCode !== undefined && isErrorCode(errorCode),
    true,
    `error.code ${errorCode} is in the catalogue`,
  );
  t.equal(r.stdout.trim().split('\n').length, 1, 'one JSON line');
  t.match(r.stderr, new RegExp(`^clibroker: ${type}[^\\n]*\\n$`), 'one stderr line');
  return (r.env as { error: { message: string; flag?: string; hint?: string; code?: string } }).error;
}

t.test(
  'vendor run: real curl through the in-process broker, the secret only from the environment',
  async (t) => {
    const r = run(['-sS', 'https://api.github.com/user']);
    t.equal(r.code, 0, r.stderr);
    t.match(r.data, { status: 'completed', exitCode: 0, cliTier: 'read', mockVendor: 'github', requests: 1 });
    t.equal(JSON.parse(r.data.stdout).login, 'octocat', 'the mock vendor took the stamped token');
    t.notMatch(r.stdout, TOKEN, 'the secret is not in the envelope');
    t.ok(statSync(store).isFile(), 'the store was created');
  },
);

t.test('vendor run: the store defaults to ~/.clibroker/store.db, its directory mode 0700', async (t) => {
  const home = join(work, 'home2');
  const r = cb(
    [
      'vendor',
      'run',
      '--manifest',
      MANIFEST_JSON,
      '--cli',
      'curl',
      '--',
      '-sS',
      'https://api.github.com/user',
    ],
    { env: { ...env, HOME: home } },
  );
  t.equal(r.code, 0, r.stderr);
  t.equal(statSync(join(home, '.clibroker')).mode & 0o777, 0o700);
  t.ok(statSync(join(home, '.clibroker', 'store.db')).isFile());
  const q = cb(['audit', 'query', '--run', r.data.runId], { env: { ...env, HOME: home } });
  t.same(
    q.data.events.map((e: { event: { type: string } }) => e.event.type),
    ['egress.allowed', 'extension.execution.succeeded'],
  );
  const viaEnv = cb(['audit', 'query', '--run', r.data.runId], {
    env: { ...env, HOME: work, CLIBROKER_STORE: join(home, '.clibroker', 'store.db') },
  });
  t.equal(viaEnv.data.events.length, 2, '$CLIBROKER_STORE names the store too');
});

t.test('vendor run: --stdin-file - passes stdin to the vendor CLI', async (t) => {
  const r = run(GRAPHQL_FROM_STDIN, ['--stdin-file', '-'], { input: '{"query":"{ viewer { login } }"}' });
  t.equal(r.code, 0, r.stderr);
  t.same(JSON.parse(r.data.stdout), { data: { viewer: { login: 'octocat' } } });
  const none = run(GRAPHQL_FROM_STDIN, [], { input: '{"query":"{ viewer { login } }"}' });
  t.equal(none.code, 0, none.stderr);
  t.notMatch(
    none.data.stdout,
    /octocat/,
    "without --stdin-file the CLI's stdin is closed: curl sent an empty body",
  );
});

t.test('vendor run: one stdin consumer per invocation', async (t) => {
  const r = cb(
    [
      'vendor',
      'run',
      '--store',
      store,
      '--manifest-file',
      '-',
      '--cli',
      'curl',
      '--stdin-file',
      '-',
      '--',
      '-sS',
      'https://api.github.com/user',
    ],
    { input: MANIFEST_JSON },
  );
  const e = failed(t, r, 'flag-parse');
  t.equal(e.flag, 'manifest-file,stdin-file');
  const ok = cb(
    [
      'vendor',
      'run',
      '--store',
      store,
      '--manifest-file',
      '-',
      '--cli',
      'curl',
      '--',
      '-sS',
      'https://api.github.com/user',
    ],
    { input: MANIFEST_JSON },
  );
  t.equal(ok.code, 0, 'the manifest alone may come from stdin');
});

t.test('vendor run: the connection comes from the environment or a file, never argv or stdin', async (t) => {
  const { CLIBROKER_CONNECTION: _, ...noConn } = env;
  const missing = failed(t, run(['-sS', 'https://api.github.com/user'], [], { env: noConn }), 'auth');
  t.match(missing, { flag: 'connection-file', message: /CLIBROKER_CONNECTION/ });

  const secret = 'gho_ThisMustNeverBeEchoed0000000000000001';
  const bad = run(['-sS', 'https://api.github.com/user'], [], {
    env: {
      ...noConn,
      CLIBROKER_CONNECTION: `{"kind":"oauth_access_token","accessToken":"${secret}","extra":1`,
    },
  });
  t.match(failed(t, bad, 'auth').message, /not valid JSON/);
  const odd = run(['-sS', 'https://api.github.com/user'], [], {
    env: { ...noConn, CLIBROKER_CONNECTION: JSON.stringify({ kind: 'oauth_access_token', token: secret }) },
  });
  t.match(failed(t, odd, 'auth').message, /lacks the string field accessToken/);
  for (const r of [bad, odd]) t.notMatch(r.stdout + r.stderr, secret, 'the secret is never echoed');

  const file = join(work, 'conn.json');
  writeFileSync(file, CONNECTION_JSON, { mode: 0o600 });
  const viaFile = run(['-sS', 'https://api.github.com/user'], ['--connection-file', file], { env: noConn });
  t.equal(viaFile.code, 0, viaFile.stderr);
  t.equal(JSON.parse(viaFile.data.stdout).login, 'octocat');
  t.equal(
    failed(t, run(['-sS', 'x'], ['--connection-file', '-'], { env: noConn }), 'flag-parse').flag,
    'connection-file',
  );
});

t.test(
  "vendor run: the store's assignment switch is the gate; --assignment-allow only lowers it",
  async (t) => {
    const POST = [
      '-sS',
      '--fail-with-body',
      '-X',
      'POST',
      '--data',
      '{"title":"x"}',
      'https://api.github.com/repos/acme/app/issues',
    ];
    const r = run(POST, ['--tier', 'write']);
    t.equal(r.code, 0, r.stderr);
    t.match(r.data, {
      status: 'refused',
      cliTier: 'read',
      cliTierReason: 'assignment-read',
      refusal: { policyCode: 'CLI_REQUEST_TIER_DENIED' },
    });
    t.match(
      run(POST, ['--tier', 'write', '--assignment-allow', 'write']).data,
      { cliTier: 'read', cliTierReason: 'assignment-read' },
      'a flag cannot raise the switch',
    );

    const set = allowWrites();
    t.equal(set.code, 0, set.stderr);
    t.ok(
      !Number.isNaN(Date.parse(set.data.updatedAt)) &&
        new Date(set.data.updatedAt).toISOString() === set.data.updatedAt,
      `updatedAt ${set.data.updatedAt} is an ISO 8601 time`,
    );
    t.match(set.data, {
      status: 'changed',
      previous: 'read',
      tier: 'write',
      event: { type: 'extension.cli_tier.raised', who: 'admin@example.com' },
    });
    t.match(allowWrites().data, { status: 'unchanged' });
    t.match(run(POST, atWrite).data, { status: 'completed', cliTier: 'write', exitCode: 0 });
    t.match(
      run(POST, ['--tier', 'write', '--assignment-allow', 'read']).data,
      { status: 'refused', cliTier: 'read', cliTierReason: 'assignment-read' },
      'the flag lowers it',
    );
    const raised = cb(['audit', 'query', '--store', store, '--type', 'extension.cli_tier.raised']);
    t.equal(raised.data.events.length, 1, 'the change was audited once');
  },
);

t.test('pause, approve, resume across processes: the DELETE is sent exactly once', async (t) => {
  allowWrites();
  const paused = run(DELETE, atWrite);
  t.equal(paused.code, 0, paused.stderr);
  t.match(paused.data, {
    status: 'paused',
    approvalId: String,
    approval: { method: 'DELETE', host: 'api.github.com', path: '/repos/acme/app', status: 'pending' },
  });
  const id: string = paused.data.approvalId;
  const runId: string = paused.data.runId;
  t.match(paused.data.next, `approvals approve --id ${id}`);
  const spec = join(`${store}.runs`, `${runId}.json`);
  t.equal(statSync(spec).mode & 0o777, 0o600, 'the run spec is private');
  t.notMatch(JSON.stringify(readdirSync(`${store}.runs`)), TOKEN);

  const list = cb(['approvals', 'list', '--store', store, '--status', 'pending']);
  t.ok(
    list.data.approvals.some((a: { id: string }) => a.id === id),
    'listed as pending',
  );
  t.match(cb(['approvals', 'show', '--store', store, '--id', id]).data, {
    id,
    runId,
    status: 'pending',
    tool: 'curl_cli',
    toolArgs: { args: DELETE },
  });

  const early = failed(t, cb(['vendor', 'resume', '--store', store, '--approval', id]), 'runtime');
  t.match(early, { code: 'APPROVAL_NOT_PENDING', message: /^APPROVAL_NOT_PENDING: .* is pending/ });

  const ok = cb(['approvals', 'approve', '--store', store, '--id', id, '--by', 'alice@example.com']);
  t.equal(ok.code, 0, ok.stderr);
  t.ok(
    !Number.isNaN(Date.parse(ok.data.updatedAt)) &&
      new Date(ok.data.updatedAt).toISOString() === ok.data.updatedAt,
    `updatedAt ${ok.data.updatedAt} is an ISO 8601 time`,
  );
  t.match(ok.data, {
    status: 'approved',
    approvalId: id,
    runId,
    approval: { decidedBy: 'alice@example.com' },
  });

  const resumed = cb(['vendor', 'resume', '--store', store, '--approval', id]);
  t.equal(resumed.code, 0, resumed.stderr);
  t.match(resumed.data, { status: 'completed', runId, exitCode: 0 });
  t.throws(() => statSync(spec), 'the spec is gone once the run finished');
  t.equal(cb(['approvals', 'show', '--store', store, '--id', id]).data.status, 'consumed');

  const again = failed(t, cb(['vendor', 'resume', '--store', store, '--approval', id]), 'runtime');
  t.match(again.message, /^APPROVAL_NOT_PENDING: .* is consumed/, 'single use');

  const sent = cb(['audit', 'query', '--store', store, '--run', runId, '--decision', 'allow']);
  t.same(
    sent.data.events.map(
      (e: { event: { method: string; path: string } }) => `${e.event.method} ${e.event.path}`,
    ),
    ['DELETE /repos/acme/app'],
    'exactly one DELETE went out',
  );
  const refused = cb(['audit', 'query', '--store', store, '--run', runId, '--decision', 'deny']);
  t.match(refused.data.events, [
    { event: { type: 'egress.blocked', method: 'DELETE', policyCode: 'CLI_APPROVAL_PENDING' } },
  ]);
  t.equal(refused.data.events.length, 1);
  const outcomes = cb([
    'audit',
    'query',
    '--store',
    store,
    '--run',
    runId,
    '--type',
    'extension.execution.succeeded',
    '--type',
    'extension.execution.failed',
  ]);
  t.same(
    outcomes.data.events.map((e: { event: { type: string } }) => e.event.type),
    ['extension.execution.failed', 'extension.execution.succeeded'],
  );
});

t.test('reject: never approvable, never resumable', async (t) => {
  allowWrites();
  const paused = run(DELETE, atWrite);
  const id: string = paused.data.approvalId;
  t.match(cb(['approvals', 'reject', '--store', store, '--id', id, '--by', 'bob@example.com']).data, {
    status: 'rejected',
    approvalId: id,
  });
  const e = failed(
    t,
    cb(['approvals', 'approve', '--store', store, '--id', id, '--by', 'mallory@example.com']),
    'runtime',
  );
  t.match(e, {
    message: /^APPROVAL_NOT_PENDING: approval .* is rejected/,
    flag: 'id',
    hint: /can never be approved/,
  });
  t.match(
    failed(t, cb(['vendor', 'resume', '--store', store, '--approval', id]), 'runtime').message,
    /^EXEC_ACTION_CONFIRMATION_DECLINED: bob@example.com rejected DELETE/,
  );
  t.equal(cb(['approvals', 'show', '--store', store, '--id', id]).data.status, 'rejected');
});

t.test('unknown approval ids, missing stores and bad times', async (t) => {
  for (const argv of [
    ['approvals', 'show', '--store', store, '--id', 'no-such-id'],
    ['approvals', 'approve', '--store', store, '--id', 'no-such-id', '--by', 'a'],
    ['approvals', 'reject', '--store', store, '--id', 'no-such-id', '--by', 'a'],
    ['vendor', 'resume', '--store', store, '--approval', 'no-such-id'],
  ]) {
    const e = failed(t, cb(argv), 'runtime');
    t.match(
      e,
      { code: 'APPROVAL_NOT_FOUND', message: /^APPROVAL_NOT_FOUND: /, hint: /approvals list/ },
      argv.slice(0, 2).join(' '),
    );
  }
  const missing = join(work, 'nope', 'store.db');
  t.match(failed(t, cb(['audit', 'query', '--store', missing]), 'runtime'), {
    code: 'STORE_NOT_FOUND',
    flag: 'store',
    message: /no store at/,
  });
  t.throws(() => statSync(missing), 'a read command never creates a store');
  t.equal(
    failed(t, cb(['audit', 'query', '--store', store, '--since', 'yesterday']), 'flag-parse').flag,
    'since',
  );
  failed(t, cb(['audit', 'query', '--store', store, '--decision', 'maybe']), 'enum-mismatch');
  const table = cb(['audit', 'query', '--store', store, '--format', 'table', '--limit', '3']);
  t.match(table.data, /^seq +event +run +method +host/);
  t.equal(table.data.trim().split('\n').length, 5, 'header, rule, three rows');
});

t.test('vendor run --help says where the secret comes from', async (t) => {
  const r = cb(['vendor', 'run', '--help']);
  t.equal(r.code, 0);
  t.match(r.stdout, /secrets never in argv/);
  t.match(r.stdout, /--stdin-file <path\|->/);
  t.match(r.stdout, /CLIBROKER_CONNECTION/);
});

t.test('clibroker demo: the main job, every check held', async (t) => {
  const r = cb(['demo'], { env: { HOME: join(work, 'home3') } });
  t.equal(r.code, 0, r.stderr);
  t.match(r.data, {
    ok: true,
    checks: {
      mutationRefusedAtRead: true,
      destructivePaused: true,
      deleteSentExactlyOnce: true,
      secondResumeRefused: true,
      realCredentialOnEveryRequest: true,
      placeholderNeverForwarded: true,
    },
  });
  t.match(r.data.auditTable, /extension\.cli_tier\.raised/);
  t.match(r.data.auditTable, /DELETE +api\.github\.com +\/repos\/acme\/app +destructive +allow +204/);
});
