/**
 * The runner's steps, each entered alone: the host-only argument check, the pinned image
 * check, the session's audit tap, the result's base (output masked), the sandbox's options,
 * the lost-events rule and the one execution event a call ends with.
 */
import t from 'tap';
import type { AuditEvent } from '../../src/broker/types.js';
import { BrokerError } from '../../src/errors.js';
import { argvDigest, type Call, executionEvent, startCall } from '../../src/runs/call.js';
import {
  auditTap,
  checkImage,
  refuseHostOnlyArgs,
  resultBase,
  RunningGates,
  sandboxOptions,
} from '../../src/runs/execute.js';
import { lostEventsFail } from '../../src/runs/runner.js';
import { createStoreBreaker } from '../../src/runs/store-guard.js';
import type { RunResult } from '../../src/runs/types.js';
import type { SandboxResult } from '../../src/sandbox/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import type { Decision } from '../../src/broker/types.js';
import { githubConnection, githubExtension } from './fixtures.js';

const input = (over: Record<string, unknown> = {}) =>
  ({
    extension: githubExtension,
    cli: 'curl',
    args: ['-sS', 'https://api.github.com/user'],
    connection: githubConnection,
    tier: {
      requested: 'write',
      organizationCeiling: 'write',
      assignmentAllow: 'write',
      identity: 'assigned',
    },
    context: { kind: 'agent-step', tool: 'curl_cli' },
    ...over,
  }) as never;

const cli = githubExtension.clis.find((c) => c.id === 'curl')!;

const egress = (over: Partial<AuditEvent> = {}): AuditEvent => ({
  type: 'egress.allowed',
  time: new Date().toISOString(),
  session: 's',
  method: 'GET',
  host: 'api.github.com',
  path: '/user',
  class: 'read',
  decision: 'allow',
  reason: 'allowed',
  outcome: 'sent',
  requestBytes: 0,
  responseBytes: 0,
  durationMs: 1,
  ...over,
});

const sandboxed = (over: Partial<SandboxResult> = {}): SandboxResult => ({
  exitCode: 0,
  signal: null,
  stdout: '',
  stderr: '',
  truncated: false,
  timedOut: false,
  durationMs: 1,
  profile: 'plain',
  hiddenPathsEnforced: false,
  ...over,
});

t.test('host-only arguments in the tool arguments are refused, each named', (t) => {
  const cases: Record<string, [Record<string, unknown> | undefined, string[] | undefined]> = {
    'no tool arguments': [undefined, undefined],
    'the agent’s own arguments': [{ args: ['api', 'user'] }, undefined],
    'cliTier smuggled': [{ cliTier: 'write' }, ['cliTier']],
    'approvedRequestDigests smuggled': [{ approvedRequestDigests: [] }, ['approvedRequestDigests']],
    'both smuggled': [
      { cliTier: 'write', approvedRequestDigests: [] },
      ['cliTier', 'approvedRequestDigests'],
    ],
  };
  t.plan(Object.keys(cases).length);
  for (const [name, [toolArgs, fields]] of Object.entries(cases)) {
    const run = () =>
      refuseHostOnlyArgs({ context: { kind: 'agent-step', ...(toolArgs ? { toolArgs } : {}) } });
    if (fields) t.throws(run, { code: 'INVALID_TOOL_INPUT', details: { fields } }, name);
    else t.doesNotThrow(run, name);
  }
});

t.test('a pinned image: another name is a wiring bug; a changed executable never runs', async (t) => {
  t.plan(5);
  let verified = 0;
  const image = (name: string, verify?: () => Promise<void>) => ({
    name,
    executable: '/usr/bin/curl',
    profile: 'plain' as const,
    verify:
      verify ??
      (async () => {
        verified++;
      }),
  });
  await t.resolves(checkImage(undefined, cli), 'no image: the manifest’s own program');
  await t.rejects(checkImage(image('other'), cli), { code: 'INTERNAL_ERROR' }, 'another name is refused');
  t.equal(verified, 0, 'and its executable is never verified');
  await t.resolves(checkImage(image(cli.binary.image), cli));
  await t.rejects(
    checkImage(
      image(cli.binary.image, async () => {
        throw new BrokerError('TOOL_VENDOR_CLI_EXECUTABLE_CHANGED');
      }),
      cli,
    ),
    { code: 'TOOL_VENDOR_CLI_EXECUTABLE_CHANGED' },
    'a verify that throws refuses the call',
  );
});

t.test('the audit tap: every event stored, refusals counted until the result is taken', async (t) => {
  const store = openSqliteStore(':memory:');
  t.teardown(() => store.close());
  const call = startCall(input({ runId: 'tap-1' }));
  const stops: Decision[] = [];
  const gate = { stop: (d: Decision) => stops.push(d) };
  const tap = auditTap(
    { store, breaker: createStoreBreaker(store), running: new RunningGates() },
    call,
    gate,
  );
  tap.onAudit(egress({ labels: { runId: 'tap-1' } }));
  tap.onAudit(
    egress({
      type: 'egress.blocked',
      decision: 'deny',
      reason: 'no',
      policyCode: 'CLI_EGRESS_HOST_DENIED',
      folded: 3,
      labels: { runId: 'tap-1' },
    }),
  );
  t.equal(tap.requests, 4, 'a summary event counts for the refusals folded into it');
  const seen = tap.take();
  tap.onAudit(egress({ decision: 'deny', reason: 'late', labels: { runId: 'tap-1' } }));
  t.same(seen.requests, 4, 'an event after the result was taken changes nothing in it');
  t.match(seen.refusals, [
    { code: 'POLICY_BLOCKED', policyCode: 'CLI_EGRESS_HOST_DENIED', message: 'no', folded: 3, path: '/user' },
  ]);
  t.equal(seen.refusals.length, 1);
  await Promise.all(call.writes);
  t.equal(
    (await store.listEvents({ type: ['egress.allowed', 'egress.blocked'] })).length,
    3,
    'all three stored',
  );
  t.equal(call.lost, 0);
  t.same(stops, [], 'no gate stopped');
  t.end();
});

t.test('the audit tap: a write the store refuses stops this gate and every other running one', async (t) => {
  const store = openSqliteStore(':memory:');
  await store.close(); // a store that refuses every write
  const running = new RunningGates();
  const stopped: string[] = [];
  const mine = { stop: (d: Decision) => stopped.push(`mine:${d.decision === 'deny' ? d.policyCode : ''}`) };
  const other = { stop: (d: Decision) => stopped.push(`other:${d.decision === 'deny' ? d.policyCode : ''}`) };
  running.add(other);
  const breaker = createStoreBreaker(store);
  const call = startCall(input());
  const tap = auditTap({ store, breaker, running }, call, mine);
  tap.onAudit(egress());
  tap.onAudit(egress());
  await Promise.all(call.writes);
  t.equal(call.lost, 2, 'both events lost');
  t.ok(call.lostBy, 'the first failure kept');
  t.same(
    stopped,
    ['mine:STORE_WRITE_FAILED', 'other:STORE_WRITE_FAILED'],
    'stopped once each, on the first loss',
  );
  await t.rejects(breaker.check(), { code: 'STORE_WRITE_FAILED' }, 'the breaker is open');
  const ended = lostEventsFail(call, { ok: true, result: { runId: call.runId } as RunResult });
  t.match(ended, { ok: false, err: { code: 'STORE_WRITE_FAILED', details: { lostEvents: 2 } } });
  t.end();
});

t.test('the result base masks every credential handed out, and the cut end of one', (t) => {
  const call = startCall(input({ runId: 'base-1' }));
  const token = 'gho_HandedOutToTheVendor0001';
  const sb = sandboxed({
    stdout: `Authorization: token ${token}\nok`,
    stderr: `x ${token.slice(0, 8)}`,
    truncated: true,
  });
  const base = resultBase(
    call,
    sb,
    { requests: 1, refusals: [] },
    { unknownOutcomes: [], sent: [], pending: undefined },
    { stamped: [`token ${token}`, token], own: new Set([token]) },
  );
  t.equal(base.stdout, 'Authorization: [REDACTED]\nok');
  t.equal(base.stderr, 'x ', 'the first characters of a secret at the cut end are dropped');
  t.match(base, { runId: 'base-1', cliTier: 'write', cliTierReason: 'requested', requests: 1, exitCode: 0 });
  t.end();
});

t.test('the sandbox runs the pinned image when one is passed, else the manifest’s program', (t) => {
  const session = {} as never;
  const prepared = { plan: { cli } } as never;
  const pinned = sandboxOptions(
    input({
      image: { name: 'plain', executable: '/opt/curl', profile: 'isolated', hiddenPaths: ['/etc/clibroker'] },
      stdin: 'in',
    }),
    cli,
    prepared,
    session,
    1_000,
  );
  t.match(pinned, {
    entrypoint: '/opt/curl',
    image: 'isolated',
    strictProfile: true,
    hiddenPaths: ['/etc/clibroker'],
    deadlineMs: 1_000,
  });
  t.same(pinned.stdin, Buffer.from('in'));
  const own = sandboxOptions(input(), cli, prepared, session, 1_000);
  t.match(own, { entrypoint: 'curl', image: 'plain', strictProfile: true });
  t.notOk('hiddenPaths' in own || 'stdin' in own || 'preamble' in own);
  t.end();
});

t.test('the execution event: from a result, or from what the call threw', (t) => {
  const call: Call = startCall(input({ runId: 'ev-1' }));
  const cases: Record<string, [unknown, Record<string, unknown>]> = {
    'a catalogue error with a policy code records the policy code': [
      new BrokerError('POLICY_BLOCKED', { policyCode: 'CLI_REQUEST_TIER_DENIED' }),
      { type: 'extension.execution.failed', code: 'CLI_REQUEST_TIER_DENIED' },
    ],
    'a catalogue error records its code': [
      new BrokerError('CONFIG_SECRET_UNAVAILABLE'),
      { type: 'extension.execution.failed', code: 'CONFIG_SECRET_UNAVAILABLE' },
    ],
    'anything else is INTERNAL_ERROR': [
      new Error('boom'),
      { type: 'extension.execution.failed', code: 'INTERNAL_ERROR' },
    ],
  };
  t.plan(Object.keys(cases).length + 2);
  for (const [name, [err, want]] of Object.entries(cases))
    t.match(
      executionEvent(call, { ok: false, err }),
      {
        ...want,
        runId: 'ev-1',
        extensionId: 'github',
        cliId: 'curl',
        cliTier: 'write',
        tool: 'curl_cli',
        argvDigest: argvDigest(['-sS', 'https://api.github.com/user']),
      },
      name,
    );
  const done = executionEvent(call, {
    ok: true,
    result: { status: 'completed', refusals: [], unknownOutcomes: [], durationMs: 7 } as unknown as RunResult,
  });
  t.match(done, { type: 'extension.execution.succeeded', durationMs: 7 });
  t.notOk('code' in done, 'a completed call has no code');
});
