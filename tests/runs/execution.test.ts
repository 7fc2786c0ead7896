/**
 * Every call writes exactly one extension.execution.* event with cliTier and cliTierReason —
 * also a call refused before the CLI starts, whose BrokerError still reaches the caller.
 */
import t from 'tap';
import type { Connection } from '../../src/credentials/types.js';
import { BrokerError } from '../../src/errors.js';
import { defineExtension } from '../../src/manifest/define.js';
import type { RunInput } from '../../src/runs/index.js';
import { atWrite, githubConnection, runFixture } from './fixtures.js';

const app: Connection = {
  kind: 'oauth_client_credentials',
  clientId: 'app-1',
  clientSecret: 'AppSecretNeverInAnEvent~0001',
  tenantId: 't1',
  tokenUrl: 'https://login.example.com/t1/oauth2/v2.0/token',
};
const ext = (clis: unknown[], more: Record<string, unknown> = {}) =>
  defineExtension({
    id: 'exec-test',
    egress: ['api.github.com'],
    toolkits: { t: { credential: 'auth.default' } },
    clis,
    ...more,
  } as never);

type Case = {
  over: (base: RunInput) => Partial<RunInput>;
  code: string;
  cliTier: 'read' | 'write';
  cliTierReason: string;
  cliId?: string;
};
const cases: Record<string, Case> = {
  'cliTier smuggled in the tool arguments (INVALID_TOOL_INPUT)': {
    over: () => ({
      ...atWrite,
      context: { kind: 'agent-step', toolArgs: { argv: ['api', 'user'], cliTier: 'write' } },
    }),
    code: 'INVALID_TOOL_INPUT',
    cliTier: 'write',
    cliTierReason: 'requested',
  },
  'approvedRequestDigests smuggled in the tool arguments': {
    over: () => ({ context: { kind: 'agent-step', toolArgs: { approvedRequestDigests: ['a'.repeat(64)] } } }),
    code: 'INVALID_TOOL_INPUT',
    cliTier: 'read',
    cliTierReason: 'requested',
  },
  'a CLI the extension does not declare': {
    over: () => ({ cli: 'kubectl' }),
    code: 'TOOL_VENDOR_CLI_NOT_DECLARED',
    cliTier: 'read',
    cliTierReason: 'requested',
    cliId: 'kubectl',
  },
  'scopes with a token that is no application identity': {
    over: () => ({
      extension: ext([
        {
          id: 'c',
          binary: { image: 'plain', entrypoint: 'curl' },
          credentialHosts: [{ hosts: ['api.github.com'], scopes: ['repo'] }],
        },
      ]),
      cli: 'c',
    }),
    code: 'IDENTITY_NOT_CONFIGURED',
    cliTier: 'read',
    cliTierReason: 'requested',
  },
  'several egress hosts and nothing that says where the credential goes': {
    over: () => ({
      extension: ext([{ id: 'c', binary: { image: 'plain', entrypoint: 'curl' } }], {
        egress: ['api.github.com', 'uploads.github.com'],
      }),
      cli: 'c',
    }),
    code: 'TOOL_VENDOR_CLI_CREDENTIAL_HOSTS_REQUIRED',
    cliTier: 'read',
    cliTierReason: 'requested',
  },
  'an entrypoint that does not exist (CLI_SPAWN_FAILED)': {
    over: () => ({
      ...atWrite,
      extension: ext([{ id: 'c', binary: { image: 'plain', entrypoint: '/nonexistent/clibroker-cli' } }]),
      cli: 'c',
    }),
    code: 'CLI_SPAWN_FAILED',
    cliTier: 'write',
    cliTierReason: 'requested',
  },
  'arguments over the limits (INVALID_TOOL_INPUT from the sandbox)': {
    over: (b) => ({ args: Array.from({ length: 257 }, () => 'x'), context: { ...b.context, toolArgs: {} } }),
    code: 'INVALID_TOOL_INPUT',
    cliTier: 'read',
    cliTierReason: 'requested',
  },
  'a preamble that fails (CLI_PREAMBLE_FAILED)': {
    over: () => ({
      extension: ext(
        [
          {
            id: 'c',
            binary: { image: 'plain', entrypoint: '/bin/false' },
            bootstrap: { tokenEndpoint: 'credential.tokenUrl', preamble: ['login', '{clientId}'] },
          },
        ],
        { egress: ['api.github.com'] },
      ),
      cli: 'c',
      connection: app,
      ...atWrite,
    }),
    code: 'CLI_PREAMBLE_FAILED',
    cliTier: 'write',
    cliTierReason: 'requested',
  },
  'a preamble that outlives the deadline (CLI_TIMEOUT)': {
    over: () => ({
      extension: ext([
        {
          id: 'c',
          binary: { image: 'plain', entrypoint: '/bin/sleep' },
          bootstrap: { tokenEndpoint: 'credential.tokenUrl', preamble: ['30'] },
        },
      ]),
      cli: 'c',
      connection: app,
      deadlineMs: 500,
    }),
    code: 'CLI_TIMEOUT',
    cliTier: 'read',
    cliTierReason: 'requested',
  },
  'write asked for with a linked identity: the tier is still resolved': {
    over: () => ({
      tier: {
        requested: 'write',
        organizationCeiling: 'write',
        assignmentAllow: 'write',
        identity: 'linked',
      },
      cli: 'nope',
    }),
    code: 'TOOL_VENDOR_CLI_NOT_DECLARED',
    cliTier: 'read',
    cliTierReason: 'linked-identity',
    cliId: 'nope',
  },
};

t.test(
  'a call refused before the CLI starts: the error reaches the caller, and one execution.failed event is written',
  async (t) => {
    const f = await runFixture(t);
    const entries = Object.entries(cases);
    t.plan(entries.length * 3 + 1);
    for (const [i, [name, c]] of entries.entries()) {
      const base = f.input('gh', ['api', 'user']);
      const runId = `pre-start-${i}`;
      const input = { ...base, ...c.over(base), runId };
      await t.rejects(f.runner.run(input), { code: c.code }, `${name}: ${c.code} is thrown`);
      const events = await f.store.listEvents({ runId });
      t.same(
        events.map((e) => e.event.type),
        ['extension.execution.failed'],
        `${name}: exactly one event, and it is execution.failed`,
      );
      t.match(
        events[0]?.event,
        {
          runId,
          extensionId: input.extension.id,
          cliId: c.cliId ?? input.cli,
          cliTier: c.cliTier,
          cliTierReason: c.cliTierReason,
          code: c.code,
        },
        `${name}: tier, reason and code recorded`,
      );
    }
    t.equal(f.vendor.log.length, 0, 'nothing reached the vendor');
  },
);

t.test(
  'a completed run and a refused run each write exactly one execution event, after their egress events',
  async (t) => {
    const f = await runFixture(t);
    const ok = await f.runner.run(f.input('curl', ['-sS', 'https://api.github.com/user']));
    const denied = await f.runner.run(
      f.input('curl', ['-sS', '-X', 'POST', '--data', '{}', 'https://api.github.com/repos/acme/app/issues']),
    );
    t.equal(ok.status, 'completed');
    t.equal(denied.status, 'refused');
    for (const [r, type, code] of [
      [ok, 'extension.execution.succeeded', undefined],
      [denied, 'extension.execution.failed', 'CLI_REQUEST_TIER_DENIED'],
    ] as const) {
      const events = (await f.store.listEvents({ runId: r.runId })).map((e) => e.event);
      t.same(
        events.map((e) => e.type),
        [r.status === 'completed' ? 'egress.allowed' : 'egress.blocked', type],
      );
      t.match(events[1], {
        cliTier: 'read',
        cliTierReason: 'requested',
        exitCode: 0,
        ...(code ? { code } : {}),
      });
    }
  },
);

t.test("a refused resume is a call too: one execution.failed event under the approval's run", async (t) => {
  const f = await runFixture(t);
  const input = f.input('curl', ['-sS', '-X', 'DELETE', 'https://api.github.com/repos/acme/app'], atWrite);
  const paused = await f.runner.run(input);
  if (paused.status !== 'paused') return t.fail(`expected paused, got ${paused.status}`);
  await t.rejects(f.runner.resume(paused.approval.id, input), { code: 'APPROVAL_NOT_PENDING' });
  await f.runner.reject(paused.approval.id, 'bob@example.com');
  await t.rejects(f.runner.resume(paused.approval.id, input), { code: 'EXEC_ACTION_CONFIRMATION_DECLINED' });
  const executions = (
    await f.store.listEvents({
      runId: paused.runId,
      type: ['extension.execution.succeeded', 'extension.execution.failed'],
    })
  ).map((e) => e.event);
  t.match(executions, [
    { type: 'extension.execution.failed', code: 'CLI_APPROVAL_PENDING', cliTier: 'write' },
    { type: 'extension.execution.failed', code: 'APPROVAL_NOT_PENDING', cliTier: 'write' },
    { type: 'extension.execution.failed', code: 'EXEC_ACTION_CONFIRMATION_DECLINED', cliTier: 'write' },
  ]);
  t.equal(executions.length, 3);
  await t.rejects(f.runner.resume('no-such-approval', { ...input, runId: 'resume-unknown' }), {
    code: 'APPROVAL_NOT_FOUND',
  });
  t.match(
    (await f.store.listEvents({ runId: 'resume-unknown' })).map((e) => e.event),
    [{ type: 'extension.execution.failed', code: 'APPROVAL_NOT_FOUND' }],
  );
  t.equal(f.vendor.log.length, 0, 'nothing was deleted');
});

t.test(
  'a connection read when the call starts: a secret that cannot be read is a call the runner refuses, with its one event',
  async (t) => {
    const f = await runFixture(t);
    let reads = 0;
    const unreadable = new BrokerError('CONFIG_SECRET_UNAVAILABLE', { message: 'the secret cannot be read' });
    const source = (fail: boolean): RunInput['connection'] => ({
      kind: 'oauth_access_token',
      read: async () => {
        reads++;
        if (fail) throw unreadable;
        return githubConnection;
      },
    });
    const args = ['-sS', 'https://api.github.com/user'];
    const ok = await f.runner.run(f.input('curl', args, { connection: source(false) }));
    t.equal(ok.status, 'completed', 'a source that reads runs the call');
    t.equal(reads, 1, 'read once, when the call started');
    const e = await f.runner
      .run(f.input('curl', args, { connection: source(true), runId: 'unreadable' }))
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    t.equal(e, unreadable, 'the caller sees the error the source threw, unchanged');
    const events = (await f.store.listEvents({ runId: 'unreadable' })).map((x) => x.event);
    t.same(
      events.map((x) => x.type),
      ['extension.execution.failed'],
      'exactly one event, and it is execution.failed',
    );
    t.match(events[0], {
      code: 'CONFIG_SECRET_UNAVAILABLE',
      extensionId: 'github',
      cliId: 'curl',
      cliTier: 'read',
      cliTierReason: 'requested',
    });
    t.equal(f.vendor.log.length, 1, 'only the first call reached the vendor');
    await t.rejects(
      f.runner.run(f.input('curl', args, { connection: { kind: 'api_key', read: 'no' } as never })),
      { code: 'RUN_INPUT_INVALID', details: { path: 'connection.read' } },
      'a read that is no function is refused where the input enters',
    );
    // The tier is resolved from the declared kind; a token credential read back from a source
    // that declared a key would otherwise run where a token credential may not.
    const before = f.vendor.log.length;
    await t.rejects(
      f.runner.run(
        f.input('curl', args, {
          connection: { kind: 'api_key', read: async () => githubConnection },
          runId: 'other-kind',
        }),
      ),
      { code: 'RUN_INPUT_INVALID', details: { path: 'connection.kind' } },
      'a source that reads a connection of another kind than it declared is refused',
    );
    t.equal(f.vendor.log.length, before, 'nothing reached the vendor');
    t.match(
      (await f.store.listEvents({ runId: 'other-kind' })).map((x) => x.event),
      [{ type: 'extension.execution.failed', code: 'RUN_INPUT_INVALID' }],
      'the refused call has its one event',
    );
  },
);
