/**
 * extensionGadgets end to end: every CLI of a manifest becomes `<id>_cli`, and calling the
 * curl gadget runs real curl through a real runner and broker against the embedded vendor
 * (which answers 401 to anything but the real token, so a pass proves the stamping).
 */
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { extensionGadgets } from '../../src/cli/vendor.js';
import { runData } from '../../src/cli/run-result.js';
import { AUDIT_EVENT_TYPES } from '../../src/commands/audit.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { createRunner } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { STORE_EVENT_TYPES } from '../../src/store/types.js';
import { extension, GRAPHQL_FROM_STDIN, TOKEN } from './fixtures/vendor.js';

const vendor = await startMockVendor(githubVendor({ token: TOKEN }));
const broker = await createBroker({
  upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
});
const store = openSqliteStore(':memory:');
const runner = createRunner({ broker, store });
t.teardown(async () => {
  await broker.close();
  await vendor.close();
  await store.close();
});

const base = { connection: { kind: 'oauth_access_token', accessToken: TOKEN }, deadlineMs: 60_000 } as const;
const readTier = { organizationCeiling: 'write', assignmentAllow: 'read', identity: 'assigned' } as const;
const byName = (
  tier:
    | typeof readTier
    | { requested: 'write'; organizationCeiling: 'write'; assignmentAllow: 'write'; identity: 'assigned' },
) => Object.fromEntries(extensionGadgets(runner, extension, { ...base, tier }).map((g) => [g.name, g]));

t.test('one gadget per declared CLI, named <id>_cli, described from its help tree', async (t) => {
  const gadgets = extensionGadgets(runner, extension, { ...base, tier: readTier });
  t.same(
    gadgets.map((g) => g.name),
    ['curl_cli', 'gh_cli'],
  );
  t.match(
    gadgets[1]!.description,
    /^Work seamlessly with GitHub from the command line\. Commands: api \(Make an authenticated GitHub API request\)\./,
  );
  t.match(gadgets[0]!.inputSchema, {
    type: 'object',
    properties: { args: { type: 'array' }, stdin: { type: 'string' } },
    required: ['args'],
  });
});

t.test('curl_cli: real curl through the broker, the real token stamped', async (t) => {
  const before = vendor.log.length;
  const r = await byName(readTier)['curl_cli']!.invoke({ args: ['-sS', 'https://api.github.com/user'] });
  t.match(r, { success: true, data: { status: 'completed', exitCode: 0, cliTier: 'read' } });
  if (!r.success) return;
  t.equal(JSON.parse(r.data.stdout).login, 'octocat');
  t.equal(vendor.log.length, before + 1, 'one request reached the vendor');
  t.equal(vendor.log.at(-1)!.headers.authorization, `token ${TOKEN}`);
  const events = await store.listEvents({ runId: r.data.runId });
  t.same(
    events.map((e) => e.event.type),
    ['egress.allowed', 'extension.execution.succeeded'],
  );
  t.match(events[1]!.event, { cliId: 'curl', cliTier: 'read' });
});

t.test('curl_cli: stdin reaches the CLI', async (t) => {
  const r = await byName(readTier)['curl_cli']!.invoke({
    args: GRAPHQL_FROM_STDIN,
    stdin: '{"query":"{ viewer { login } }"}',
  });
  t.match(r, { success: true, data: { status: 'completed' } });
  if (r.success) t.same(JSON.parse(r.data.stdout), { data: { viewer: { login: 'octocat' } } });
  t.match(vendor.log.at(-1), { method: 'POST', path: '/graphql' });
  t.equal(vendor.log.at(-1)!.body.toString(), '{"query":"{ viewer { login } }"}');
});

t.test('a write at tier read is refused by the broker; the gadget reports it', async (t) => {
  const before = vendor.log.length;
  const r = await byName(readTier)['curl_cli']!.invoke({
    args: [
      '-sS',
      '--fail-with-body',
      '-X',
      'POST',
      '--data',
      '{"title":"x"}',
      'https://api.github.com/repos/acme/app/issues',
    ],
  });
  t.match(r, {
    success: true,
    data: { status: 'refused', refusal: { policyCode: 'CLI_REQUEST_TIER_DENIED', method: 'POST' } },
  });
  t.equal(vendor.log.length, before, 'nothing reached the vendor');
});

t.test('cliTier in the gadget input is refused before anything runs', async (t) => {
  const before = vendor.log.length;
  const r = await byName(readTier)['curl_cli']!.invoke({
    args: ['-sS', 'https://api.github.com/user'],
    cliTier: 'write',
  });
  t.match(r, { success: false, error: { type: 'unknown-flag', flag: 'cliTier' } });
  t.equal(vendor.log.length, before);
});

t.test('a DELETE at tier write pauses: data carries the approval id, the vendor saw nothing', async (t) => {
  const before = vendor.log.length;
  const r = await byName({
    requested: 'write',
    organizationCeiling: 'write',
    assignmentAllow: 'write',
    identity: 'assigned',
  })['curl_cli']!.invoke({
    args: ['-sS', '-X', 'DELETE', 'https://api.github.com/repos/acme/app'],
  });
  t.match(r, {
    success: true,
    data: {
      status: 'paused',
      approvalId: String,
      approval: { status: 'pending', method: 'DELETE', tool: 'curl_cli' },
    },
  });
  if (!r.success) return;
  t.equal(r.data.approvalId, r.data.status === 'paused' ? r.data.approval.id : undefined);
  t.notOk('next' in r.data, 'a gadget host runs its own approval flow: no CLI next step');
  t.same((await store.getApproval(r.data.approvalId!))?.toolArgs, {
    args: ['-sS', '-X', 'DELETE', 'https://api.github.com/repos/acme/app'],
  });
  t.equal(vendor.log.length, before);
});

t.test('runData names the CLI next step only for the CLI', async (t) => {
  const paused = { status: 'paused', approval: { id: 'a1' } } as unknown as Parameters<typeof runData>[0];
  t.match(runData(paused, 'clibroker'), {
    approvalId: 'a1',
    next: /clibroker approvals approve --id a1 --by <who>.*clibroker vendor resume --approval a1/,
  });
  t.notOk('next' in runData(paused));
});

t.test("audit query's --type values are the store's event types", async (t) => {
  t.same([...AUDIT_EVENT_TYPES], [...STORE_EVENT_TYPES]);
});
