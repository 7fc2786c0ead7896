// Run the real gh through createRunner: a destructive request pauses the run for a person's
// approval; once approved, the same command resumes and the request is sent exactly once.
//
// By default it runs offline, against clibroker's embedded GitHub-like mock vendor (started
// here through clibroker/testing, as a host's integration test does). Against the real
// api.github.com it would delete the repository it names, so only with a repository of your
// own: CLIBROKER_EXAMPLE_REAL=1 GITHUB_TOKEN=<a token> EXAMPLE_REPO=<owner>/<name> node gh-approval.mjs
//
// It prints, run as is:
//
//   run: paused
//   pending approval: DELETE api.github.com/repos/acme/app
//   resumed: completed, gh exit 0
//   resuming again: APPROVAL_NOT_PENDING
//   the vendor got the DELETE 1 time
import { createBroker, createRunner, defineExtension, openSqliteStore } from 'clibroker';
import { routeToMock, startMockVendor } from 'clibroker/testing';

const real = process.env.CLIBROKER_EXAMPLE_REAL === '1';
if (real && (!process.env.GITHUB_TOKEN || !process.env.EXAMPLE_REPO)) {
  console.error(
    'CLIBROKER_EXAMPLE_REAL=1 runs against api.github.com: set GITHUB_TOKEN to a GitHub token and EXAMPLE_REPO to <owner>/<name> of a repository you mean to delete.',
  );
  process.exit(1);
}
const mock = real ? undefined : await startMockVendor({ shape: 'github' });
const repo = real ? process.env.EXAMPLE_REPO : 'acme/app';

const extension = defineExtension({
  id: 'github',
  egress: ['api.github.com'],
  toolkits: { github: { credential: 'auth.default' } },
  clis: [{ id: 'gh', binary: { image: 'plain', entrypoint: 'gh' }, credentialEnv: ['GH_TOKEN'], authScheme: 'token' }],
});

const broker = await createBroker({ upstream: mock && routeToMock(mock) });
const store = openSqliteStore(':memory:');
const runner = createRunner({ broker, store });
/** @type {import('clibroker').RunInput} */
const input = {
  extension,
  cli: 'gh',
  args: ['api', '-X', 'DELETE', `repos/${repo}`],
  connection: mock?.connection ?? { kind: 'oauth_access_token', accessToken: process.env.GITHUB_TOKEN },
  tier: { requested: 'write', organizationCeiling: 'write', assignmentAllow: 'write', identity: 'assigned' },
  context: { kind: 'agent-step', tool: 'gh_cli' },
};
try {
  const first = await runner.run(input);
  console.log(`run: ${first.status}`);
  if (first.status !== 'paused') throw new Error(`expected a pause, got ${first.status}`);
  const { id, method, host, path } = first.approval;
  console.log(`pending approval: ${method} ${host}${path}`);

  await runner.approve(id, 'reviewer@example.com');
  const resumed = await runner.resume(id, input);
  console.log(`resumed: ${resumed.status}, gh exit ${resumed.exitCode}`);

  try {
    await runner.resume(id, input);
  } catch (e) {
    console.log(`resuming again: ${e.code}`);
  }
  // the mock vendor logs what it received: the approved DELETE arrived once, not twice
  if (mock) console.log(`the vendor got the DELETE ${mock.log.filter((r) => r.method === 'DELETE').length} time`);
} finally {
  await broker.close();
  await store.close();
  await mock?.close();
}
