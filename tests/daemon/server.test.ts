import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { MAX_BODY_BYTES } from '../../src/daemon/body.js';
import { callDaemon } from '../../src/daemon/client.js';
import { resumePath, ROUTES } from '../../src/daemon/protocol.js';
import { startDaemon } from '../../src/daemon/server.js';
import { BrokerError } from '../../src/errors.js';
import { daemonFixture, output, post, raw, recordingHost, socketDir } from './helpers.js';

const SECRET_ARG = 'ghp_0123456789abcdefABCDEF0123456789abcd';
const SECRET_STDIN = 'stdin-secret-7f3a9c2e1b4d';
const TOKEN = `exec-${randomBytes(32).toString('hex')}`;

/** The code a call fails with (or 'ok'), and its details. */
async function code(
  p: Promise<unknown>,
): Promise<{ code: string; details?: Record<string, unknown>; message: string }> {
  try {
    await p;
    return { code: 'ok', message: '' };
  } catch (e) {
    if (!(e instanceof BrokerError)) throw e;
    return { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
  }
}

t.test('execute: the input reaches the host as is, the tier and context are the listener’s', async (t) => {
  const f = await daemonFixture(t, { cliTier: 'write', context: 'api' }, [SECRET_ARG, SECRET_STDIN]);
  const input = { args: ['api', 'user', SECRET_ARG], stdin: SECRET_STDIN };
  const out = await callDaemon<{ stdout: string; runId: string }>(
    { socket: f.socket },
    'POST',
    ROUTES.execute,
    { toolId: 'gh_cli', input },
  );
  t.same(JSON.parse(out.stdout), input, 'the answer is the host’s');
  t.same(f.host.calls, [
    { tool: 'gh_cli', input, opts: { cliTier: 'write', context: 'api', tierSource: 'daemon.cliTier' } },
  ]);
  t.match(f.guard.text, /"tool":"gh_cli"/, 'the log names the tool');
  t.match(f.guard.text, /"runId":"run-1"/, 'and the run');
  t.notMatch(f.guard.text, /api|user/, 'never the arguments');
});

t.test('tools, health and resume', async (t) => {
  const f = await daemonFixture(t, { cliTier: 'write' });
  t.match(await callDaemon({ socket: f.socket }, 'GET', ROUTES.health), { status: 'ok' });
  t.match(await callDaemon({ socket: f.socket }, 'GET', ROUTES.tools), {
    tools: [{ name: 'gh_cli' }, { name: 'curl_cli' }],
  });
  t.match(await callDaemon({ socket: f.socket }, 'POST', resumePath('a-1')), {
    stdout: 'resumed',
    runId: 'run-2',
  });
  t.match(await code(callDaemon({ socket: f.socket }, 'POST', resumePath('zz'))), {
    code: 'APPROVAL_NOT_FOUND',
    details: { approvalId: 'zz' },
  });
  t.match(
    await code(callDaemon({ socket: f.socket }, 'POST', resumePath('a/../x'))),
    { code: 'DAEMON_PROTOCOL_ERROR' },
    'a malformed id never reaches the host',
  );
  t.match(
    await code(callDaemon({ socket: f.socket }, 'POST', resumePath('a-1'), { cliTier: 'write' })),
    { code: 'DAEMON_PROTOCOL_ERROR' },
    'resume takes no body',
  );
  t.same(f.host.resumed, ['a-1', 'zz'], 'only the well-formed ids reached the host');
});

t.test('a listener below tier write resumes nothing: a resumed call runs at write', async (t) => {
  for (const opts of [{}, { cliTier: 'read' as const }]) {
    const f = await daemonFixture(t, opts);
    t.match(
      await code(callDaemon({ socket: f.socket }, 'POST', resumePath('a-1'))),
      {
        code: 'POLICY_BLOCKED',
        details: { policyCode: 'CLI_REQUEST_TIER_DENIED', approvalId: 'a-1', listenerTier: 'read' },
        message: /runs at tier write, and this listener grants tier read/,
      },
      JSON.stringify(opts),
    );
    t.same(f.host.resumed, [], 'the host was never asked');
  }
});

// name → [request bytes, HTTP status, code]
const refusals: Record<string, [string | Buffer, number, string]> = {
  'not UTF-8': [
    Buffer.from(post(ROUTES.execute, '{"toolId":"gh_cli","input":"?"}'), 'latin1').map((b) =>
      b === 0x3f ? 0xff : b,
    ) as Buffer,
    400,
    'DAEMON_PROTOCOL_ERROR',
  ],
  'malformed JSON': [post(ROUTES.execute, '{"toolId": "gh_cli", "input": {'), 400, 'DAEMON_PROTOCOL_ERROR'],
  'not an object': [post(ROUTES.execute, '["gh_cli"]'), 400, 'DAEMON_PROTOCOL_ERROR'],
  'cliTier beside the input': [
    post(ROUTES.execute, '{"toolId":"gh_cli","input":{"args":[]},"cliTier":"write"}'),
    400,
    'DAEMON_PROTOCOL_ERROR',
  ],
  'context beside the input': [
    post(ROUTES.execute, '{"toolId":"gh_cli","input":{"args":[]},"context":"chat"}'),
    400,
    'DAEMON_PROTOCOL_ERROR',
  ],
  'a __proto__ key': [
    post(ROUTES.execute, '{"toolId":"gh_cli","input":{"args":[]},"__proto__":{"cliTier":"write"}}'),
    400,
    'DAEMON_PROTOCOL_ERROR',
  ],
  'no input': [post(ROUTES.execute, '{"toolId":"gh_cli"}'), 400, 'DAEMON_PROTOCOL_ERROR'],
  'toolId not a string': [
    post(ROUTES.execute, '{"toolId":7,"input":{"args":[]}}'),
    400,
    'DAEMON_PROTOCOL_ERROR',
  ],
  'unknown route': [post('/v1/tools/exec', '{}'), 404, 'DAEMON_PROTOCOL_ERROR'],
  'wrong method': [
    'GET /v1/tools/execute HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n',
    405,
    'DAEMON_PROTOCOL_ERROR',
  ],
  'tool not offered': [
    post(ROUTES.execute, '{"toolId":"az_cli","input":{"args":[]}}'),
    404,
    'TOOL_VENDOR_CLI_NOT_OFFERED',
  ],
  'declared length over the cap': [
    `POST ${ROUTES.execute} HTTP/1.1\r\nhost: x\r\ncontent-length: ${MAX_BODY_BYTES + 1}\r\n\r\n{`,
    413,
    'DAEMON_PROTOCOL_ERROR',
  ],
};

t.test('refusals: status, code, and the host is never called for the transport’s own', async (t) => {
  t.plan(Object.keys(refusals).length * 3 + 1);
  const f = await daemonFixture(t);
  for (const [name, [req, status, want]] of Object.entries(refusals)) {
    const r = await raw(f.socket, req);
    t.equal(r.status, status, `${name}: HTTP ${status}`);
    t.match(r.body, { ok: false, error: { code: want, message: String, retry: false } }, `${name}: ${want}`);
    t.notMatch(r.text, /at .*\.ts:\d+/, `${name}: no stack`);
  }
  t.same(
    f.host.calls.map((c) => c.tool),
    ['az_cli'],
    'only the well-formed call reached the host',
  );
});

t.test('a body over the cap is refused while it streams, and the connection closes', async (t) => {
  const f = await daemonFixture(t);
  const r = await new Promise<{ status: number; written: number; ended: boolean }>((resolve, reject) => {
    const s = connect(f.socket);
    let got = '';
    let written = 0;
    let ended = false;
    s.on('error', () => undefined);
    s.on('data', (c) => {
      got += c.toString();
    });
    s.on('close', () =>
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0), written, ended }),
    );
    s.write(`POST ${ROUTES.execute} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n`);
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const pump = (): void => {
      // keep writing past the cap, never ending the request: the answer must come anyway
      while (written <= MAX_BODY_BYTES + 4 * chunk.length) {
        written += chunk.length;
        if (!s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)) return void s.once('drain', pump);
      }
      ended = true;
    };
    pump();
    setTimeout(() => reject(new Error('no answer')), 20_000).unref();
  });
  t.equal(r.status, 413, 'Payload Too Large');
  t.ok(
    r.written < MAX_BODY_BYTES + 4 * 1024 * 1024,
    'answered before the client had written everything it meant to',
  );
  t.notOk(r.ended);
  t.same(f.host.calls, [], 'the host never saw it');
});

t.test('executor token: missing or wrong → 401 and the host is never called', async (t) => {
  const f = await daemonFixture(t, { executorToken: async () => TOKEN }, [TOKEN]);
  const body = { toolId: 'gh_cli', input: { args: [] } };
  t.match(await code(callDaemon({ socket: f.socket }, 'POST', ROUTES.execute, body)), {
    code: 'DAEMON_UNAUTHORIZED',
  });
  t.match(await code(callDaemon({ socket: f.socket, token: `${TOKEN}x` }, 'POST', ROUTES.execute, body)), {
    code: 'DAEMON_UNAUTHORIZED',
  });
  t.match(await code(callDaemon({ socket: f.socket, token: 'short' }, 'GET', ROUTES.tools)), {
    code: 'DAEMON_UNAUTHORIZED',
  });
  const r = await raw(
    f.socket,
    post(ROUTES.execute, JSON.stringify(body), { authorization: `Basic ${TOKEN}` }),
  );
  t.equal(r.status, 401, 'not a bearer token');
  t.same(f.host.calls, [], 'nothing reached the host');
  t.match(await callDaemon({ socket: f.socket, token: TOKEN }, 'POST', ROUTES.execute, body), {
    runId: 'run-1',
  });
  t.match(
    await callDaemon({ socket: f.socket }, 'GET', ROUTES.health),
    { status: 'ok' },
    'health needs no token',
  );
  t.equal(f.host.calls.length, 1);
});

t.test('a token that cannot be read fails closed', async (t) => {
  const f = await daemonFixture(t, {
    executorToken: async () => {
      throw new BrokerError('CONFIG_SECRET_UNAVAILABLE', {
        message: 'CONFIG_SECRET_UNAVAILABLE: /etc/clibroker/token is mode 0644',
      });
    },
  });
  const r = await code(callDaemon({ socket: f.socket, token: 'anything' }, 'GET', ROUTES.tools));
  t.equal(r.code, 'CONFIG_SECRET_UNAVAILABLE');
  t.notMatch(r.message, /etc\/clibroker/, 'the caller is not told where the secret lives');
});

t.test(
  'host failures keep their code and details; an uncoded one is INTERNAL_ERROR without its text',
  async (t) => {
    const f = await daemonFixture(t, {}, ['internal-detail-4e1c9b']);
    const call = () =>
      callDaemon({ socket: f.socket }, 'POST', ROUTES.execute, { toolId: 'gh_cli', input: { args: [] } });
    f.host.onRun = async () => {
      throw new BrokerError('POLICY_BLOCKED', { policyCode: 'CLI_REQUEST_TIER_DENIED' });
    };
    const r1 = await raw(f.socket, post(ROUTES.execute, '{"toolId":"gh_cli","input":{"args":[]}}'));
    t.equal(r1.status, 422);
    t.match(r1.body, {
      error: { code: 'POLICY_BLOCKED', details: { policyCode: 'CLI_REQUEST_TIER_DENIED' } },
    });
    f.host.onRun = async () => {
      throw new BrokerError('CLI_APPROVAL_PENDING', { details: { approvalId: 'a-9' } });
    };
    t.match(await code(call()), { code: 'CLI_APPROVAL_PENDING', details: { approvalId: 'a-9' } });
    f.host.onRun = async () => {
      throw new BrokerError('INVALID_TOOL_INPUT', { details: { field: 'cliTier' } });
    };
    t.equal(
      (await raw(f.socket, post(ROUTES.execute, '{"toolId":"gh_cli","input":{"cliTier":"write"}}'))).status,
      400,
    );
    f.host.onRun = async () => {
      throw new Error('internal-detail-4e1c9b');
    };
    const r2 = await raw(f.socket, post(ROUTES.execute, '{"toolId":"gh_cli","input":{"args":[]}}'));
    t.equal(r2.status, 500);
    t.match(r2.body, { ok: false, error: { code: 'INTERNAL_ERROR' } });
    t.notMatch(r2.text, /internal-detail|Error:|at /, 'no message, no stack');
  },
);

t.test('concurrent calls run together', async (t) => {
  const f = await daemonFixture(t);
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let waiting = 0;
  f.host.onRun = async (_tool, input) => {
    if (++waiting === 8) release();
    await gate;
    return output(JSON.stringify(input));
  };
  const outs = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      callDaemon<{ stdout: string }>({ socket: f.socket }, 'POST', ROUTES.execute, {
        toolId: 'gh_cli',
        input: { args: [String(i)] },
      }),
    ),
  );
  t.same(
    outs.map((o) => JSON.parse(o.stdout).args[0]),
    ['0', '1', '2', '3', '4', '5', '6', '7'],
    'all eight were in the host at once, and each got its own answer',
  );
});

t.test(
  'the socket: mode from the start, stale replaced, live and foreign refused, removed on close',
  async (t) => {
    const dir = socketDir(t);
    const host = recordingHost();

    const socket = join(dir, 'a.sock');
    const d = await startDaemon(host, { socket });
    t.equal(lstatSync(socket).mode & 0o777, 0o660, 'mode 0660 right after start');
    t.ok(lstatSync(socket).isSocket());
    t.same(
      execFileSync('ls', ['-A', dir], { encoding: 'utf8' }).trim().split('\n'),
      ['a.sock'],
      'no temporary name left beside it',
    );
    t.match(
      await code(startDaemon(host, { socket })),
      { code: 'DAEMON_SOCKET_IN_USE' },
      'a second daemon on a live socket refuses to start',
    );
    t.match(
      await callDaemon({ socket }, 'GET', ROUTES.health),
      { status: 'ok' },
      'and the first still answers',
    );
    await d.close();
    t.notOk(existsSync(socket), 'close removes the socket');
    t.match(await code(callDaemon({ socket }, 'GET', ROUTES.health)), {
      code: 'DAEMON_UNAVAILABLE',
      message: new RegExp(socket),
    });

    const tight = join(dir, 'b.sock');
    const d2 = await startDaemon(host, { socket: tight, socketMode: 0o600 });
    t.equal(lstatSync(tight).mode & 0o777, 0o600, 'the configured mode');
    await d2.close();

    // a stale socket: bound by a process that exited without removing it
    const stale = join(dir, 'c.sock');
    execFileSync('python3', [
      '-c',
      'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])',
      stale,
    ]);
    t.ok(lstatSync(stale).isSocket(), 'a stale socket is there');
    const d3 = await startDaemon(host, { socket: stale });
    t.match(
      await callDaemon({ socket: stale }, 'GET', ROUTES.health),
      { status: 'ok' },
      'the stale socket was replaced',
    );
    await d3.close();

    // a socket someone else listens on
    const other = join(dir, 'd.sock');
    const srv = createServer((c) => c.on('error', () => undefined).end('theirs'));
    await new Promise<void>((r) => srv.listen(other, r));
    t.match(await code(startDaemon(host, { socket: other })), { code: 'DAEMON_SOCKET_IN_USE' });
    t.ok(lstatSync(other).isSocket(), 'their socket is untouched');
    await new Promise<void>((r) => srv.close(() => r()));

    const file = join(dir, 'e.sock');
    writeFileSync(file, 'not a socket');
    t.match(
      await code(startDaemon(host, { socket: file })),
      { code: 'DAEMON_SOCKET_IN_USE' },
      'a regular file is never replaced',
    );
    t.equal(readFileSync(file, 'utf8'), 'not a socket');
  },
);

// The client never finishes its head and never closes: only the daemon's header timeout can
// end the connection, and the test's own limit is what fails it if that never happens.
t.test('a client that sends nothing does not hold its connection', { timeout: 30_000 }, async (t) => {
  const f = await daemonFixture(t, { headersTimeoutMs: 300, requestTimeoutMs: 300 });
  const closed = await new Promise<'closed'>((resolve) => {
    const s = connect(f.socket);
    t.teardown(() => s.destroy());
    s.on('error', () => undefined);
    s.on('close', () => resolve('closed'));
    s.resume();
    s.write('POST /v1/tools/execute HTTP/1.1\r\nhost: x\r\n');
  });
  t.equal(closed, 'closed', 'the daemon closed a silent connection (this side never ends it)');
});

t.test('the client names the socket it could not reach', async (t) => {
  const missing = join(socketDir(t), 'nope.sock');
  const r = await code(callDaemon({ socket: missing }, 'GET', ROUTES.health));
  t.equal(r.code, 'DAEMON_UNAVAILABLE');
  t.match(r.message, missing);
  t.match(r.message, /is the daemon running/, 'and why');
  t.match(r.details, { socket: missing, errno: 'ENOENT' });
});

t.test(
  'close: the socket goes at once, a running call still gets its answer, one past the grace is cut',
  { timeout: 30_000 },
  async (t) => {
    const dir = socketDir(t);
    const host = recordingHost();
    const socket = join(dir, 'g.sock');
    const d = await startDaemon(host, { socket, closeGraceMs: 300 });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started!: () => void;
    const inHost = new Promise<void>((r) => {
      started = r;
    });
    host.onRun = async () => {
      started();
      await gate;
      return output('finished');
    };
    const call = callDaemon<{ stdout: string }>({ socket }, 'POST', ROUTES.execute, {
      toolId: 'gh_cli',
      input: { args: [] },
    });
    await inHost;
    const closing = d.close();
    await new Promise((r) => setTimeout(r, 50));
    t.notOk(existsSync(socket), 'the socket is removed while the call runs');
    t.match(
      await code(callDaemon({ socket }, 'GET', ROUTES.health)),
      { code: 'DAEMON_UNAVAILABLE' },
      'no new call reaches a stopping daemon',
    );
    release();
    t.equal((await call).stdout, 'finished', 'the running call got its answer');
    await closing;

    const socket2 = join(dir, 'h.sock');
    const d2 = await startDaemon(host, { socket: socket2, closeGraceMs: 200 });
    host.onRun = () => new Promise(() => undefined);
    const stuck = code(
      callDaemon({ socket: socket2 }, 'POST', ROUTES.execute, { toolId: 'gh_cli', input: { args: [] } }),
    );
    await new Promise((r) => setTimeout(r, 100));
    // The host never answers that call: close returning at all (within the test's limit) is the grace cutting it.
    t.equal(await d2.close().then(() => 'closed'), 'closed', 'close returns after the grace');
    t.match(
      await stuck,
      { code: 'DAEMON_NO_ANSWER', message: /may have run/ },
      'the cut call is told it may have run',
    );
  },
);

t.test('each refused request is one warning line, and an unreadable token one error line', async (t) => {
  const f = await daemonFixture(t, { executorToken: async () => TOKEN }, [TOKEN]);
  await code(callDaemon({ socket: f.socket, token: `${TOKEN}x` }, 'GET', ROUTES.tools));
  const lines = f.guard.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const refused = lines.filter((l) => l.msg === 'daemon request refused');
  t.equal(refused.length, 1, 'one line');
  t.match(refused[0], { level: 40, status: 401, code: 'DAEMON_UNAUTHORIZED', durationMs: Number });

  const broken = await daemonFixture(t, {
    executorToken: async () => {
      throw new Error('EACCES: /etc/clibroker/token');
    },
  });
  await code(callDaemon({ socket: broken.socket, token: 'anything' }, 'GET', ROUTES.tools));
  const bl = broken.guard.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.match(
    bl.find((l) => l.event === 'daemon.token_unavailable'),
    { level: 50, msg: 'the executor token cannot be read' },
    'the unreadable secret is logged as an error',
  );
  t.match(
    bl.find((l) => l.msg === 'daemon request refused'),
    { level: 40, code: 'CONFIG_SECRET_UNAVAILABLE' },
    'and the request it refused as a warning',
  );
});
