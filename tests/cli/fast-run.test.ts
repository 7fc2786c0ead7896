/**
 * The fast path of `clibroker run` and `clibroker resume` (src/commands/fast-run.ts) against
 * the router, by difference: every call runs through the built binary twice against the same
 * real daemon, once as an agent runs it and once with CLIBROKER_NO_FAST_PATH=1 (the router),
 * and stdout, stderr and the exit code must be the same bytes.
 *
 * A third build proves which path answered: a copy whose router chunk, the one the fast path
 * falls back to, is deleted. A call the fast path takes answers the same there; a call it
 * hands to the router cannot be answered there at all.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import t from 'tap';
import { resume, run } from '../../src/commands/run.js';
import { LIMITS, recognise } from '../../src/commands/fast-run.js';
import { BrokerError } from '../../src/errors.js';
import { daemonFixture, type Fixture, output, type Ran, runBinary, socketDir } from '../daemon/helpers.js';
import { buildBinary } from './fixtures/helpers.js';

const { bin } = await buildBinary();
const built = dirname(dirname(bin));
// the same build without the chunk the fast path hands the router's calls to
const fastOnly = mkdtempSync(`${built}-fast-only-`);
cpSync(built, fastOnly, { recursive: true, verbatimSymlinks: true });
for (const f of readdirSync(join(fastOnly, 'dist', 'chunks')))
  if (f.startsWith('program-')) rmSync(join(fastOnly, 'dist', 'chunks', f));
const fastOnlyBin = join(fastOnly, 'bin', 'clibroker.js');
t.teardown(() => {
  rmSync(built, { recursive: true, force: true });
  rmSync(fastOnly, { recursive: true, force: true });
});

const TOKEN = `exec-${randomBytes(24).toString('hex')}`;

interface Runs {
  fast: Ran;
  full: Ran;
  only: Ran;
}

const bytes = (r: Ran) => ({ code: r.code, stdout: r.stdout, stderr: r.stderr });

/** The call as an agent runs it, through the router, and through the build without the router. */
async function thrice(args: string[], env: Record<string, string>, input = ''): Promise<Runs> {
  const fast = await runBinary(bin, args, env, input);
  const full = await runBinary(bin, args, { ...env, CLIBROKER_NO_FAST_PATH: '1' }, input);
  const only = await runBinary(fastOnlyBin, args, env, input);
  return { fast, full, only };
}

const NOT_BUILT = /"clibroker is not built"/;

interface Case {
  name: string;
  args: string[];
  env?: (f: Fixture) => Record<string, string>;
  input?: string;
  before?: (f: Fixture) => void;
  /** a call the router sends (once per path that has the router) */
  sends?: true;
}

const socketEnv = (f: Fixture) => ({ CLIBROKER_SOCKET: f.socket });

t.test('what the fast path takes, it answers byte for byte as the router does', async (t) => {
  const f = await daemonFixture(t, { cliTier: 'write' });
  const file = join(f.dir, 'query.json');
  writeFileSync(file, '{"query":"{viewer{login}}"}\n');
  const cases: Case[] = [
    { name: 'a plain call', args: ['run', 'gh_cli', '--', 'api', 'user'] },
    { name: 'the tool by its id', args: ['run', 'github:cli:gh', '--', 'api', 'user'] },
    { name: 'no arguments after --', args: ['run', 'gh_cli', '--'] },
    {
      name: 'arguments as they are: quotes, unicode, newlines, flags, --help after --',
      args: ['run', 'gh_cli', '--', 'api', '-f', 'body=it\'s "quoted"\n☃ — done', '--help', '--', '-'],
    },
    { name: 'an argument of exactly 32 KiB', args: ['run', 'gh_cli', '--', 'x'.repeat(32 * 1024)] },
    {
      name: 'stdin passed through',
      args: ['run', 'gh_cli', '--stdin-file', '-', '--', 'api', 'graphql', '--input', '-'],
      input: '{"query":"{viewer{login}}"}\n',
    },
    { name: 'stdin from a file, inline form', args: ['run', 'gh_cli', `--stdin-file=${file}`, '--', 'api'] },
    {
      name: "the tool's non-zero exit is data",
      args: ['run', 'gh_cli', '--', 'x'],
      before: (f) => {
        f.host.onRun = async () => output('', { exitCode: 3, stderr: 'no such thing\n' });
      },
    },
    {
      name: 'a large answer',
      args: ['run', 'gh_cli', '--', 'x'],
      before: (f) => {
        f.host.onRun = async () => output('y'.repeat(1024 * 1024), { truncated: true });
      },
    },
    { name: 'a tool the daemon does not offer', args: ['run', 'az_cli', '--', 'account', 'show'] },
    {
      name: 'a denial with its policy code',
      args: ['run', 'gh_cli', '--', 'repo', 'delete', 'x'],
      before: (f) => {
        f.host.onRun = async () => {
          throw new BrokerError('POLICY_BLOCKED', { policyCode: 'CLI_REQUEST_TIER_DENIED' });
        };
      },
    },
    {
      name: 'a pending approval, with the hint the client writes',
      args: ['run', 'gh_cli', '--', 'repo', 'delete', 'x'],
      before: (f) => {
        f.host.onRun = async () => {
          throw new BrokerError('CLI_APPROVAL_PENDING', { details: { approvalId: 'a-1' } });
        };
      },
    },
    {
      name: "a secret in the daemon's failure is redacted alike",
      args: ['run', 'gh_cli', '--', 'x'],
      before: (f) => {
        f.host.onRun = async () => {
          throw new BrokerError('CLI_SPAWN_FAILED', {
            details: { seen: 'ghp_0123456789abcdefABCDEF0123456789abcd' },
          });
        };
      },
    },
    {
      name: 'an uncoded failure of the host',
      args: ['run', 'gh_cli', '--', 'x'],
      before: (f) => {
        f.host.onRun = async () => {
          throw new Error('the host fell over');
        };
      },
    },
    { name: 'resume', args: ['resume', 'a-1'] },
    { name: 'resume of an unknown approval', args: ['resume', 'a-404'] },
  ];
  t.plan(cases.length);
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      t.plan(4);
      f.host.onRun = async (_tool, input) => output(JSON.stringify(input));
      c.before?.(f);
      const seen = f.host.calls.length + f.host.resumed.length;
      const r = await thrice(c.args, (c.env ?? socketEnv)(f), c.input);
      t.same(bytes(r.fast), bytes(r.full), 'the same bytes as the router');
      t.not(r.fast.stdout, '', 'an envelope was written');
      t.same(bytes(r.only), bytes(r.full), 'answered without the router');
      t.equal(
        f.host.calls.length + f.host.resumed.length - seen,
        3,
        'each invocation reached the daemon once',
      );
    });
  }
});

t.test('the daemon asking for a token: the token from the environment, or its refusal', async (t) => {
  t.plan(6);
  const f = await daemonFixture(t, { executorToken: async () => TOKEN }, [TOKEN]);
  for (const token of [TOKEN, 'exec-not-the-token']) {
    const r = await thrice(['run', 'gh_cli', '--', 'api', 'user'], {
      CLIBROKER_SOCKET: f.socket,
      CLIBROKER_EXECUTOR_TOKEN: token,
    });
    t.same(bytes(r.fast), bytes(r.full), 'the same bytes as the router');
    t.same(bytes(r.only), bytes(r.full), 'answered without the router');
    t.equal(r.fast.env?.success, token === TOKEN, token === TOKEN ? 'run' : 'refused');
  }
});

t.test('sent and not answered: the fast path reports it itself and never sends twice', async (t) => {
  t.plan(4);
  const dir = socketDir(t);
  const socket = join(dir, 'cut.sock');
  let connections = 0;
  const server = createServer((s) => {
    connections++;
    s.once('data', () => s.destroy());
  });
  await new Promise<void>((r) => server.listen(socket, r));
  t.teardown(() => server.close());
  const r = await thrice(['run', 'gh_cli', '--', 'x'], { CLIBROKER_SOCKET: socket });
  t.same(bytes(r.fast), bytes(r.full), 'the same bytes as the router');
  t.same(bytes(r.only), bytes(r.full), 'answered without the router');
  t.match(r.fast.env, { error: { code: 'DAEMON_NO_ANSWER' } });
  t.equal(connections, 3, 'one connection per invocation: no second try after the request went out');
});

t.test('a socket in a directory others may write is never connected to', async (t) => {
  t.plan(4);
  const loose = mkdtempSync(join(socketDir(t), 'loose-'));
  chmodSync(loose, 0o777);
  const socket = join(loose, 'broker.sock');
  let connections = 0;
  const impostor = createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => impostor.listen(socket, r));
  t.teardown(() => impostor.close());
  const r = await thrice(['run', 'gh_cli', '--', 'x'], { CLIBROKER_SOCKET: socket });
  t.same(bytes(r.fast), bytes(r.full), 'the same bytes as the router');
  t.match(r.fast.env, { error: { code: 'DAEMON_SOCKET_DIR_UNSAFE' } });
  t.match(r.only.stdout, NOT_BUILT, 'the router answered it');
  t.equal(connections, 0, 'nothing connected, so nothing was sent');
});

t.test('everything else goes to the router before anything is sent', async (t) => {
  const f = await daemonFixture(t, { cliTier: 'write' });
  const unsafe = mkdtempSync(join(f.dir, 'loose-'));
  chmodSync(unsafe, 0o777);
  const missing = join(f.dir, 'missing.sock');
  const cases: Case[] = [
    { name: '--help after the tool', args: ['run', 'gh_cli', '--help'] },
    { name: 'run --help', args: ['run', '--help'] },
    { name: 'resume --help', args: ['resume', '--help'] },
    { name: 'help as the word after run', args: ['run', 'help'] },
    { name: 'the -- forgotten', args: ['run', 'gh_cli', 'api', 'user'] },
    { name: 'no tool', args: ['run', '--', 'api'] },
    { name: 'run alone', args: ['run'] },
    { name: 'a flag that sets nothing here', args: ['run', 'gh_cli', '--tier', 'write', '--', 'x'] },
    { name: 'a typo of --stdin-file', args: ['run', 'gh_cli', '--stdin-fle', '-', '--', 'x'], input: 'x' },
    { name: 'a flag before the tool', args: ['run', '--tool', 'gh_cli', '--', 'api'], sends: true },
    {
      name: '--socket, which the router reads',
      args: ['run', 'gh_cli', '--socket', 'SOCKET', '--', 'x'],
      sends: true,
    },
    { name: '--token-file', args: ['run', 'gh_cli', '--token-file', '/nonexistent', '--', 'x'] },
    { name: 'a space in the tool', args: ['run', 'gh_cli api', '--', 'x'], sends: true },
    { name: 'an argument over 32 KiB', args: ['run', 'gh_cli', '--', 'x'.repeat(32 * 1024 + 1)] },
    { name: '257 arguments', args: ['run', 'gh_cli', '--', ...Array.from({ length: 257 }, () => 'a')] },
    {
      name: 'a tool name over 256 bytes',
      args: ['run', `t${'o'.repeat(256)}`, '--', 'x'],
    },
    {
      name: 'stdin over 1 MiB (read here, handed to the router)',
      args: ['run', 'gh_cli', '--stdin-file', '-', '--', 'x'],
      input: 'z'.repeat(1024 * 1024 + 1),
    },
    {
      name: 'an unreadable --stdin-file',
      args: ['run', 'gh_cli', '--stdin-file', '/nonexistent/q', '--', 'x'],
    },
    { name: '--stdin-file with no value', args: ['run', 'gh_cli', '--stdin-file', '--', 'x'] },
    { name: 'resume with a second word', args: ['resume', 'a-1', 'now'] },
    { name: 'no socket in the environment', args: ['run', 'gh_cli', '--', 'x'], env: () => ({}) },
    {
      name: 'an empty socket variable',
      args: ['run', 'gh_cli', '--', 'x'],
      env: () => ({ CLIBROKER_SOCKET: '' }),
    },
    {
      name: 'a token that cannot be a header',
      args: ['run', 'gh_cli', '--', 'x'],
      env: (f) => ({ CLIBROKER_SOCKET: f.socket, CLIBROKER_EXECUTOR_TOKEN: 'a\r\nx-evil: 1' }),
    },
    {
      name: 'no socket at the path',
      args: ['run', 'gh_cli', '--stdin-file', '-', '--', 'x'],
      input: 'read here, handed on',
      env: () => ({ CLIBROKER_SOCKET: missing }),
    },
    {
      name: 'a socket directory others may write',
      args: ['run', 'gh_cli', '--', 'x'],
      env: () => ({ CLIBROKER_SOCKET: join(unsafe, 'broker.sock') }),
    },
  ];
  t.plan(cases.length);
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      t.plan(3);
      const args = c.args.map((a) => (a === 'SOCKET' ? f.socket : a));
      const seen = f.host.calls.length;
      const r = await thrice(args, (c.env ?? socketEnv)(f), c.input);
      t.same(bytes(r.fast), bytes(r.full), 'the same bytes as the router');
      t.match(r.only.stdout, NOT_BUILT, 'the router answered it');
      // the fast path sent nothing in any case: what reached the daemon, the router sent
      t.equal(f.host.calls.length - seen, c.sends ? 2 : 0, 'only the router sent anything');
    });
  }
});

t.test('a terminal on stdin: the router refuses --stdin-file - before anything is read', async (t) => {
  const probe = spawnSync('script', ['-qec', 'true', '/dev/null']);
  if (probe.status !== 0) return t.plan(0, 'script(1) cannot open a terminal here');
  t.plan(4);
  // a live daemon: a fast path that read the terminal would send the call
  const f = await daemonFixture(t);
  // under script(1) stdin is a terminal; stdout and stderr arrive together through it
  const onTty = (program: string, env: Record<string, string>) => {
    const words = [process.execPath, program, 'run', 'gh_cli', '--stdin-file', '-', '--', 'x'];
    return new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn('script', ['-qec', words.map((w) => `'${w}'`).join(' '), '/dev/null'], {
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', CLIBROKER_SOCKET: f.socket, ...env },
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
      });
      child.on('close', (code) => resolve({ code, out }));
      child.stdin.end();
    });
  };
  const fast = await onTty(bin, {});
  t.same(fast, await onTty(bin, { CLIBROKER_NO_FAST_PATH: '1' }), 'the same bytes as the router');
  t.match(fast.out, /stdin is a terminal/);
  t.match((await onTty(fastOnlyBin, {})).out, NOT_BUILT, 'the router answered it');
  t.equal(f.host.calls.length, 0, 'nothing reached the daemon');
});

t.test('which argv the fast path takes', async (t) => {
  const env = { CLIBROKER_SOCKET: '/run/x.sock' };
  const taken: [string[], string][] = [
    [['run', 'gh_cli', '--', 'api', 'user'], 'the plain call'],
    [['run', 'gh_cli', '--stdin-file', '-', '--'], 'stdin, separate'],
    [['run', 'gh_cli', '--stdin-file=-', '--'], 'stdin, inline'],
    [['run', 'gh_cli', '--stdin-file', 'q.json', '--', '-h'], 'a file; a help word after --'],
    [['resume', '5f0c2a9e-1111-4222-8333-944455556666'], 'resume'],
  ];
  const refused: [string[], string][] = [
    [['run', 'gh_cli', '--stdin-file', '-h', '--'], 'a help word as the path'],
    [['run', 'gh_cli', '--stdin-file=', '--'], 'an empty path'],
    [['run', 'gh_cli', '--stdin-file', '-', '--stdin-file', '-', '--'], 'the flag twice'],
    [['run', '-h', '--'], 'a help word as the tool'],
    [['run', 'gh cli', '--'], 'a space in the tool'],
    [['vendor', 'run'], 'another command'],
  ];
  t.plan(taken.length + refused.length + 2);
  for (const [argv, name] of taken) t.ok(recognise(argv, env), name);
  for (const [argv, name] of refused) t.notOk(recognise(argv, env), name);
  t.same(
    recognise(['run', 'gh_cli', '--stdin-file', '-', '--', 'a'], { ...env, CLIBROKER_EXECUTOR_TOKEN: 't' }),
    {
      socket: '/run/x.sock',
      token: 't',
      path: '/v1/tools/execute',
      run: { tool: 'gh_cli', args: ['a'], stdinFrom: '-' },
    },
    'the call, whole',
  );
  t.same(
    recognise(['resume', 'a/1'], env),
    undefined,
    'an approval id that would need escaping goes to the router',
  );
});

t.test("the fast path's limits are run's and resume's", async (t) => {
  t.plan(5);
  const p = run.parameters as Record<
    string,
    { maxBytes?: number; maxItems?: number; items?: { maxBytes?: number } }
  >;
  t.equal(LIMITS.tool, p['tool']?.maxBytes);
  t.equal(LIMITS.args, p['args']?.maxItems);
  t.equal(LIMITS.argBytes, p['args']?.items?.maxBytes);
  t.equal(LIMITS.stdinBytes, p['stdin']?.maxBytes);
  t.equal(
    LIMITS.approval,
    (resume.parameters as Record<string, { maxBytes?: number }>)['approval']?.maxBytes,
  );
});
