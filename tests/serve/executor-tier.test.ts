import t from 'tap';
import { type Json, serveFromConfig, TOKENS } from './helpers.js';

// serve.executorMaxTier: the operator caps the tier the Platform API's executor may ask for.
// The server is started as `clibroker serve` starts it (serveHttp: the loader's defaults, the
// start's wiring), with the organization and the assignment both allowing writes, so only the
// cap can lower a requested write.

t.setTimeout(300_000);
const serving = serveFromConfig;

async function execute(url: string, body: unknown): Promise<{ status: number; json: Json }> {
  const r = await fetch(`${url}/v1/tools/execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS.executor}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: await r.json() };
}

const USER = { toolId: 'gh_cli', input: { args: ['api', 'user'] }, cliTier: 'write', context: 'api' };
const ISSUE = {
  toolId: 'gh_cli',
  input: { args: ['api', '-X', 'POST', 'repos/acme/app/issues', '-f', 'title=x'] },
  cliTier: 'write',
  context: 'api',
};

t.test('by default a requested write runs at read, and the result says why', async (t) => {
  const s = await serving((dir) => ({ executorToken: dir.secret('executor', TOKENS.executor) }));
  t.teardown(() => s.stop());
  const r = await execute(s.url, USER);
  t.equal(r.status, 200, JSON.stringify(r.json));
  t.match(r.json.result, { exitCode: 0, cliTier: 'read', cliTierReason: 'executor-max-tier' });
  const issues = () => s.d.vendor.log.filter((q) => q.method === 'POST' && q.path.endsWith('/issues')).length;
  const w = await execute(s.url, ISSUE);
  t.equal(w.status, 422, JSON.stringify(w.json));
  t.match(
    w.json.error,
    {
      code: 'POLICY_BLOCKED',
      details: { policyCode: 'CLI_REQUEST_TIER_DENIED', cliTier: 'read', cliTierReason: 'executor-max-tier' },
    },
    'a write under the cap is refused by policy, and says what capped it',
  );
  t.match(
    w.json.error.message,
    /serve\.executorMaxTier in the operator's configuration caps its calls at read/,
  );
  t.equal(issues(), 0, 'nothing was sent');
  // a resumed call writes: an executor capped at read resumes nothing, whatever the approval
  const resume = await fetch(`${s.url}/v1/approvals/any-id/resume`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS.executor}` },
  });
  t.equal(resume.status, 422);
  t.match(((await resume.json()) as Json).error, {
    code: 'POLICY_BLOCKED',
    details: { policyCode: 'CLI_REQUEST_TIER_DENIED', tierSource: 'serve.executorMaxTier' },
  });
  const read = await execute(s.url, { ...USER, cliTier: 'read' });
  t.match(read.json.result, { cliTier: 'read', cliTierReason: 'requested' }, 'a read asked for is just that');
});

t.test('serve.executorMaxTier: write lets the requested write stand', async (t) => {
  const s = await serving((dir) => ({
    executorToken: dir.secret('executor', TOKENS.executor),
    executorMaxTier: 'write',
  }));
  t.teardown(() => s.stop());
  const r = await execute(s.url, USER);
  t.equal(r.status, 200, JSON.stringify(r.json));
  t.match(r.json.result, { exitCode: 0, cliTier: 'write', cliTierReason: 'requested' });
  const w = await execute(s.url, ISSUE);
  t.equal(w.status, 200, JSON.stringify(w.json));
  t.match(w.json.result, { exitCode: 0, cliTier: 'write' });
});
