// Run the real gh through createRunner: a destructive request pauses the run for a person's
// approval; once approved, the same command resumes and the request is sent exactly once.
// Reads GITHUB_TOKEN; with CLIBROKER_EXAMPLE_VENDOR set (JSON {port, caPem}, as the test suite
// sets it) every host routes to that mock vendor.
import { createBroker, createRunner, defineExtension, openSqliteStore } from 'clibroker';

const mock = process.env.CLIBROKER_EXAMPLE_VENDOR && JSON.parse(process.env.CLIBROKER_EXAMPLE_VENDOR);
const upstream = mock
  ? { ca: mock.caPem, resolve: () => ({ host: '127.0.0.1', port: mock.port }), allowAddresses: ['127.0.0.0/8'] }
  : undefined;

const extension = defineExtension({
  id: 'github',
  egress: ['api.github.com'],
  toolkits: { github: { credential: 'auth.default' } },
  clis: [{ id: 'gh', binary: { image: 'plain', entrypoint: 'gh' }, credentialEnv: ['GH_TOKEN'], authScheme: 'token' }],
});

const broker = await createBroker({ upstream });
const store = openSqliteStore(':memory:');
const runner = createRunner({ broker, store });
/** @type {import('clibroker').RunInput} */
const input = {
  extension,
  cli: 'gh',
  args: ['api', '-X', 'DELETE', 'repos/acme/app'],
  connection: { kind: 'oauth_access_token', accessToken: process.env.GITHUB_TOKEN },
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
} finally {
  await broker.close();
  await store.close();
}
