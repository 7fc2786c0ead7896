import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import type { OperatorConfig } from '../../src/config/types.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { configDir } from '../helpers/config.js';
import { github, githubConfig, runBinary, spawnDaemon } from './helpers.js';

// The whole path as an operator deploys it: the real `clibroker daemon --config` spawned
// from the built binary over a real configuration (manifest pinned by sha256, /usr/bin/gh
// and /usr/bin/curl pinned and run in the isolated profile, the secrets in 0600 files), the
// mock GitHub vendor reached through the configuration's upstream routing, and the agent's
// `clibroker run` as a separate process that knows only the socket and the executor token.

const GH_TOKEN = 'ghp_DaemonE2eToken0000000000000000000001';
// a front door's token must be strong (an estimated 128 bits): the loader refuses a weak one
const EXEC_TOKEN = randomBytes(32).toString('hex');

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

const clibroker = (args: string[], env: Record<string, string>) => runBinary(bin, args, env);
const daemon = (config: string) => spawnDaemon(bin, config);

t.test('clibroker run gh_cli -- api user, through the spawned daemon', async (t) => {
  const vendor = await startMockVendor(githubVendor({ token: GH_TOKEN }));
  const dir = configDir('cbd-e2e-');
  const socket = join(dir.dir, 'broker.sock');
  const config: OperatorConfig = {
    ...githubConfig(dir, GH_TOKEN, vendor),
    daemon: { socket, socketMode: '0660', executorToken: dir.secret('executor', EXEC_TOKEN) },
  };
  const d = await daemon(dir.write(config));
  t.teardown(async () => {
    if (d.child.exitCode === null) d.child.kill('SIGKILL');
    await vendor.close();
    dir.remove();
  });
  t.match(d.listening, { event: 'daemon.listening', socket, tools: ['gh_cli', 'curl_cli'] });
  t.equal(lstatSync(socket).mode & 0o777, 0o660);

  const agent = { CLIBROKER_SOCKET: socket, CLIBROKER_EXECUTOR_TOKEN: EXEC_TOKEN };
  const gh = await clibroker(['run', 'gh_cli', '--', 'api', 'user'], agent);
  t.equal(gh.code, 0, gh.stdout + gh.stderr);
  t.match(gh.env, { success: true, data: { exitCode: 0, truncated: false, cliTier: 'read', runId: String } });
  t.match(JSON.parse(gh.env.data.stdout), { login: 'octocat' }, "the vendor's answer");
  t.equal(
    vendor.log.at(-1)?.headers.authorization,
    `token ${GH_TOKEN}`,
    'the configured secret was stamped by the daemon',
  );

  const curl = await clibroker(['run', 'github:cli:curl', '--', '-sS', 'https://api.github.com/user'], agent);
  t.match(JSON.parse(curl.env?.data?.stdout ?? '{}'), { login: 'octocat' }, 'by id, the other pinned image');

  const noToken = await clibroker(['run', 'gh_cli', '--', 'api', 'user'], { CLIBROKER_SOCKET: socket });
  t.match(noToken.env, { success: false, error: { type: 'auth', code: 'DAEMON_UNAUTHORIZED' } });
  const write = await clibroker(
    ['run', 'gh_cli', '--', 'api', '-X', 'POST', 'repos/acme/app/issues', '-f', 'title=x'],
    agent,
  );
  t.match(
    write.env,
    { success: false, error: { code: 'POLICY_BLOCKED', details: { policyCode: 'CLI_REQUEST_TIER_DENIED' } } },
    'a write at the listener’s tier read is refused',
  );
  // the hint fits the door: the agent cannot pass a tier, so it is told whose setting capped it
  t.match(write.env.error.message, /daemon\.cliTier in the operator's configuration/);
  t.notMatch(write.env.error.message, /Run the command with cliTier/, 'no advice the agent cannot follow');

  const second = await clibroker(['daemon', '--config', dir.file], {});
  t.equal(second.code, 1, 'a second daemon on the same socket does not start');
  t.match(second.env, { success: false, error: { code: 'DAEMON_SOCKET_IN_USE' } });
  t.match(
    (await clibroker(['run', 'gh_cli', '--', 'api', 'user'], agent)).env,
    { success: true },
    'and the first still serves',
  );

  d.child.kill('SIGTERM');
  t.equal(await d.exited, 0, 'SIGTERM stops it cleanly');
  const last = d.out().trim().split('\n').at(-1)!;
  t.match(JSON.parse(last), { success: true, data: { status: 'stopped', signal: 'SIGTERM' } });
  t.notOk(existsSync(socket), 'the socket is gone');
  t.match(
    d.err(),
    /"event":"daemon\.request"[^\n]*"tool":"gh_cli"[^\n]*"runId"/,
    'one log line per call, with tool and run',
  );
  t.notMatch(d.err(), /title=x/, 'never the arguments');
  for (const text of [
    gh.stdout,
    gh.stderr,
    curl.stdout,
    noToken.stdout,
    write.stdout,
    write.stderr,
    d.out(),
    d.err(),
  ]) {
    t.notMatch(text, GH_TOKEN, 'the vendor secret appears nowhere');
    t.notMatch(text, EXEC_TOKEN, 'nor the executor token');
  }
});

t.test('a configuration without a daemon block is refused before anything listens', async (t) => {
  const dir = configDir('cbd-e2e-');
  t.teardown(() => dir.remove());
  const config: OperatorConfig = {
    version: 1,
    // the conformance gate has its own tests; these are about something else
    conformance: 'optional',
    organization: { ceiling: 'read' },
    images: { curl: dir.image('/usr/bin/curl') },
    extensions: {
      github: {
        ...dir.manifest({ ...github, clis: [github.clis[1]!] }),
        connection: { kind: 'oauth_access_token', accessToken: dir.secret('github', GH_TOKEN) },
      },
    },
    store: ':memory:',
  };
  const r = await clibroker(['daemon', '--config', dir.write(config)], {});
  t.equal(r.code, 1);
  t.match(r.env, {
    success: false,
    error: { code: 'CONFIG_INVALID', details: { problems: [{ path: 'daemon' }] } },
  });
  t.notMatch(r.stdout + r.stderr, GH_TOKEN);
});

t.test('a destructive request pauses; the operator approves; clibroker resume runs it once', async (t) => {
  const vendor = await startMockVendor(githubVendor({ token: GH_TOKEN }));
  const dir = configDir('cbd-e2e-');
  const socket = join(dir.dir, 'broker.sock');
  const config: OperatorConfig = {
    ...githubConfig(dir, GH_TOKEN, vendor),
    daemon: { socket, cliTier: 'write', context: 'agent-step' },
  };
  const file = dir.write(config);
  const d = await daemon(file);
  t.teardown(async () => {
    if (d.child.exitCode === null) d.child.kill('SIGKILL');
    await vendor.close();
    dir.remove();
  });
  const agent = { CLIBROKER_SOCKET: socket };
  const operator = (args: string[]) => clibroker([...args, '--config', file], {});
  for (const cli of ['gh', 'curl'])
    t.equal(
      (
        await operator([
          'tiers',
          'set',
          '--extension',
          'github',
          '--cli',
          cli,
          '--tier',
          'write',
          '--by',
          'admin@example.com',
        ])
      ).code,
      0,
      `the operator allows writes for ${cli}`,
    );

  const deletes = () => vendor.log.filter((r) => r.method === 'DELETE').length;
  const paused = await clibroker(['run', 'gh_cli', '--', 'api', '-X', 'DELETE', 'repos/acme/app'], agent);
  t.match(paused.env, {
    success: false,
    error: { code: 'CLI_APPROVAL_PENDING', details: { approvalId: String }, hint: /clibroker resume/ },
  });
  const id: string = paused.env.error.details.approvalId;
  t.equal(deletes(), 0, 'nothing was deleted yet');
  t.match(
    (await clibroker(['resume', id], agent)).env,
    { success: false },
    'resuming before a person approved fails',
  );
  t.equal(deletes(), 0);

  const approved = await operator(['approvals', 'approve', '--id', id, '--by', 'alice@example.com']);
  t.equal(approved.code, 0, approved.stdout + approved.stderr);
  const resumed = await clibroker(['resume', id], agent);
  t.match(
    resumed.env,
    { success: true, data: { exitCode: 0, cliTier: 'write' } },
    resumed.stdout + resumed.stderr,
  );
  t.equal(deletes(), 1, 'the DELETE reached the vendor once');
  t.match(
    (await clibroker(['resume', id], agent)).env,
    { success: false, error: { code: String } },
    'an approval is used once',
  );
  t.equal(deletes(), 1);

  // a write, then a destructive request in the same command: the call fails with the rule's own
  // code, and the agent is told which write has an unknown outcome and to check it with a read
  const after = await clibroker(
    [
      'run',
      'curl_cli',
      '--',
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
    agent,
  );
  t.match(after.env, {
    success: false,
    error: {
      code: 'CLI_CONFIRMATION_AFTER_WRITE',
      details: {
        outcomeUnknown: true,
        unknownOutcomes: [{ method: 'POST', host: 'api.github.com', path: '/repos/acme/app/issues' }],
      },
    },
  });
  t.equal(after.env.error.details.policyCode, undefined, 'not POLICY_BLOCKED with a policyCode');
  t.match(
    after.env.error.message,
    /POST api\.github\.com\/repos\/acme\/app\/issues is unknown: check with a read/,
  );
  t.equal(deletes(), 1, 'the second DELETE was not sent');
  d.child.kill('SIGTERM');
  t.equal(await d.exited, 0);
});
