import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { parseArgv } from '../../src/cli/argv.js';
import { resume, run } from '../../src/commands/run.js';
import { BrokerError } from '../../src/errors.js';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { daemonFixture, output, runBinary } from './helpers.js';

// The real bundled program against a daemon in this process: spawned asynchronously, since
// a spawnSync would stop the event loop the daemon answers on.
const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

const TOKEN = `exec-${randomBytes(32).toString('hex')}`;

const clibroker = (args: string[], opts: { env?: Record<string, string>; input?: string } = {}) =>
  runBinary(bin, args, opts.env ?? {}, opts.input);

t.test('the positional word: run <tool>, resume <id>, and their flag forms', async (t) => {
  t.same(parseArgv(run, ['gh_cli', '--', 'api', 'user']).values, { tool: 'gh_cli', args: ['api', 'user'] });
  t.same(
    parseArgv(run, ['--socket', '/s', 'gh_cli', '--', 'x']).values,
    { socket: '/s', tool: 'gh_cli', args: ['x'] },
    'after a flag and its value',
  );
  t.same(parseArgv(run, ['--tool', 'github:cli:gh', '--', 'x']).values, {
    tool: 'github:cli:gh',
    args: ['x'],
  });
  t.same(parseArgv(resume, ['5f0c']).values, { approval: '5f0c' });
  const thrown = (argv: string[]): unknown => {
    try {
      parseArgv(run, argv);
    } catch (e) {
      return e;
    }
    return undefined;
  };
  t.match(thrown(['gh_cli', '--tool', 'gh_cli', '--', 'x']), {
    error: { type: 'flag-parse', message: /more than once/ },
    fix: ['--tool', 'gh_cli', '--', 'x'],
  });
  t.match(
    thrown(['gh_cli', 'api', 'user']),
    { error: { type: 'flag-parse' }, fix: ['gh_cli', '--', 'api', 'user'] },
    'a second bare word is the vendor’s',
  );
});

t.test('clibroker run: only the tool, the arguments and stdin reach the daemon', async (t) => {
  const f = await daemonFixture(t, { cliTier: 'write', context: 'api' });
  const env = { CLIBROKER_SOCKET: f.socket };
  const r = await clibroker(['run', 'gh_cli', '--', 'api', 'user'], { env });
  t.equal(r.code, 0, r.stderr);
  t.same(r.env, {
    success: true,
    data: {
      exitCode: 0,
      stdout: '{"args":["api","user"]}',
      stderr: '',
      truncated: false,
      runId: 'run-1',
      cliTier: 'read',
    },
  });
  t.same(f.host.calls[0], {
    tool: 'gh_cli',
    input: { args: ['api', 'user'] },
    opts: { cliTier: 'write', context: 'api', tierSource: 'daemon.cliTier' },
  });

  const s = await clibroker(
    [
      'run',
      '--socket',
      f.socket,
      '--tool',
      'github:cli:gh',
      '--stdin-file',
      '-',
      '--',
      'api',
      'graphql',
      '--input',
      '-',
    ],
    { input: '{"query":"{viewer{login}}"}' },
  );
  t.equal(s.code, 0, s.stderr);
  t.same(f.host.calls[1]?.input, {
    args: ['api', 'graphql', '--input', '-'],
    stdin: '{"query":"{viewer{login}}"}',
  });

  const exit = await clibroker(['run', 'gh_cli', '--', 'x'], { env });
  t.equal(exit.code, 0, 'a run is data whatever the tool exits with');

  const stray = await clibroker(['run', 'gh_cli', '--tier', 'write', '--', 'x'], { env });
  t.match(
    stray.env,
    { success: false, error: { type: 'unknown-flag', flag: 'tier' } },
    'no flag sets the tier',
  );
  const noDash = await clibroker(['run', 'gh_cli', 'api', 'user'], { env });
  t.match(noDash.env, {
    success: false,
    error: { type: 'flag-parse', retry: 'clibroker run gh_cli -- api user' },
  });
  t.equal(f.host.calls.length, 3, 'the refused invocations never reached the daemon');
});

t.test('failures carry the daemon’s code and details', async (t) => {
  // a listener at tier write: only such a listener pauses, and resumes
  const f = await daemonFixture(t, { cliTier: 'write' });
  const env = { CLIBROKER_SOCKET: f.socket };
  const offered = await clibroker(['run', 'az_cli', '--', 'account', 'show'], { env });
  t.equal(offered.code, 1);
  t.match(offered.env, {
    success: false,
    error: {
      type: 'runtime',
      code: 'TOOL_VENDOR_CLI_NOT_OFFERED',
      details: { tools: ['gh_cli', 'curl_cli'] },
    },
  });
  t.match(offered.stderr, /^clibroker: runtime: TOOL_VENDOR_CLI_NOT_OFFERED/);

  f.host.onRun = async () => {
    throw new BrokerError('POLICY_BLOCKED', { policyCode: 'CLI_REQUEST_TIER_DENIED' });
  };
  const blocked = await clibroker(['run', 'gh_cli', '--', 'repo', 'delete', 'x'], { env });
  t.match(blocked.env, {
    error: { code: 'POLICY_BLOCKED', details: { policyCode: 'CLI_REQUEST_TIER_DENIED' } },
  });
  t.notOk(blocked.env.error.example, 'no example: the words were right');

  f.host.onRun = async () => {
    throw new BrokerError('CLI_APPROVAL_PENDING', { details: { approvalId: 'a-1' } });
  };
  const paused = await clibroker(['run', 'gh_cli', '--', 'repo', 'delete', 'x'], { env });
  t.match(paused.env, {
    error: {
      code: 'CLI_APPROVAL_PENDING',
      details: { approvalId: 'a-1' },
      hint: /approvals approve --config <file> --id a-1.*clibroker resume a-1/,
    },
  });
  const resumed = await clibroker(['resume', 'a-1'], { env });
  t.match(resumed.env, { success: true, data: { stdout: 'resumed', runId: 'run-2' } });
  t.same(f.host.resumed, ['a-1']);
  const unknown = await clibroker(['resume', '--approval', 'zz'], { env });
  t.match(unknown.env, { error: { code: 'APPROVAL_NOT_FOUND' } });

  f.host.onRun = async () => output('', { exitCode: 3 });
  t.match((await clibroker(['run', 'gh_cli', '--', 'x'], { env })).env, {
    success: true,
    data: { exitCode: 3 },
  });
});

t.test('the executor token: from the environment or a file, never echoed', async (t) => {
  const f = await daemonFixture(t, { executorToken: async () => TOKEN }, [TOKEN]);
  const argv = ['run', '--socket', f.socket, 'gh_cli', '--', 'x'];
  const none = await clibroker(argv);
  t.match(none.env, { success: false, error: { type: 'auth', code: 'DAEMON_UNAUTHORIZED' } });
  const wrong = await clibroker(argv, { env: { CLIBROKER_EXECUTOR_TOKEN: 'exec-token-wrong-0000000' } });
  t.match(wrong.env, { error: { code: 'DAEMON_UNAUTHORIZED' } });
  t.equal(f.host.calls.length, 0);
  t.equal((await clibroker(argv, { env: { CLIBROKER_EXECUTOR_TOKEN: TOKEN } })).code, 0);
  const file = join(f.dir, 'token');
  writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
  const fromFile = await clibroker(['run', '--socket', f.socket, '--token-file', file, 'gh_cli', '--', 'x']);
  t.equal(fromFile.code, 0, fromFile.stderr);
  const pasted = await clibroker(['run', '--socket', f.socket, '--token-file', TOKEN, 'gh_cli', '--', 'x']);
  t.match(pasted.env, { error: { type: 'flag-parse', flag: 'token-file' } });
  for (const r of [none, wrong, fromFile, pasted])
    t.notMatch(r.stdout + r.stderr, TOKEN, 'the token is never echoed');
  t.equal(f.host.calls.length, 2);
});

t.test('no daemon: DAEMON_UNAVAILABLE naming the socket', async (t) => {
  const socket = '/nonexistent/clibroker/broker.sock';
  const r = await clibroker(['run', 'gh_cli', '--', 'x'], { env: { CLIBROKER_SOCKET: socket } });
  t.equal(r.code, 1);
  t.match(r.env, {
    success: false,
    error: {
      code: 'DAEMON_UNAVAILABLE',
      message: new RegExp(socket),
      details: { socket },
      hint: /clibroker daemon --config/,
    },
  });
  const d = await clibroker(['run', 'gh_cli', '--', 'x']);
  t.match(
    d.env,
    { error: { code: 'DAEMON_UNAVAILABLE', message: /\/run\/clibroker\/broker\.sock/ } },
    'the default socket',
  );
});
