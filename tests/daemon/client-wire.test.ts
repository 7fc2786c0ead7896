import { writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { callDaemon } from '../../src/daemon/client.js';
import { ROUTES } from '../../src/daemon/protocol.js';
import { BrokerError } from '../../src/errors.js';
import { socketDir } from './helpers.js';

// What the thin client puts on the wire and how it reads what comes back, against a raw
// socket server that records every byte: one fresh connection per call, closed by the
// client once answered, and each way a connection can fail told apart (nothing sent, or
// sent and not answered).

const TOKEN = 'exec-token-for-the-wire-test-0123456789abcdef';

/** The code a call fails with (or 'ok'), and its details. */
async function code(p: Promise<unknown>): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await p;
    return { code: 'ok', message: '' };
  } catch (e) {
    if (!(e instanceof BrokerError)) throw e;
    return { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
  }
}

interface Conn {
  bytes: string;
  /** resolves when the client ended its side ('end') or the connection closed ('close') */
  ended: Promise<'end' | 'close'>;
}

/** A unix socket server that hands each connection to `onConn` and records what arrived. */
async function rawServer(
  t: Test,
  onConn: (s: Socket, got: () => string) => void,
): Promise<{ socket: string; conns: Conn[] }> {
  const socket = join(socketDir(t), 'raw.sock');
  const conns: Conn[] = [];
  const server = createServer((s) => {
    const conn: Conn = {
      bytes: '',
      ended: new Promise((r) => {
        s.once('end', () => r('end'));
        s.once('close', () => r('close'));
      }),
    };
    conns.push(conn);
    s.on('data', (c: Buffer) => {
      conn.bytes += c.toString('utf8');
    });
    s.on('error', () => {});
    onConn(s, () => conn.bytes);
  });
  await new Promise<void>((r) => server.listen(socket, r));
  t.teardown(() => {
    server.close();
  });
  return { socket, conns };
}

/** Answers the request once its head and `content-length` bytes of body are in. */
function answerWhenRead(s: Socket, got: () => string, answer: string): void {
  const tryAnswer = (): void => {
    const text = got();
    const at = text.indexOf('\r\n\r\n');
    if (at < 0) return;
    const len = Number(/content-length: (\d+)/i.exec(text.slice(0, at))?.[1] ?? 0);
    if (Buffer.byteLength(text.slice(at + 4)) < len) return;
    s.off('data', tryAnswer);
    s.write(answer);
  };
  s.on('data', tryAnswer);
}

const okAnswer = (body: string, extra = ''): string =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

t.test('a call is one fresh connection carrying exactly its request, ended by the client', async (t) => {
  t.plan(11);
  const { socket, conns } = await rawServer(t, (s, got) =>
    answerWhenRead(s, got, okAnswer('{"ok":true,"result":{"exitCode":0}}')),
  );
  const body = { toolId: 'gh_cli', input: { args: ['api', 'user'] } };
  const first = await callDaemon({ socket, token: TOKEN }, 'POST', ROUTES.execute, body);
  const second = await callDaemon({ socket }, 'GET', ROUTES.tools);
  t.same(first, { exitCode: 0 }, "the answer's result");
  t.same(second, { exitCode: 0 });
  t.equal(conns.length, 2, 'two calls, two connections: none is kept for another call');

  const [head, sent] = conns[0]!.bytes.split('\r\n\r\n');
  const [line, ...fields] = head!.split('\r\n');
  t.equal(line, 'POST /v1/tools/execute HTTP/1.1');
  const headers = Object.fromEntries(
    fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]),
  );
  const json = JSON.stringify(body);
  t.same(
    headers,
    {
      host: 'clibroker',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(json)),
      authorization: `Bearer ${TOKEN}`,
      connection: 'close',
    },
    'these headers and no other',
  );
  t.equal(sent, json, 'the body as JSON');
  const [getHead] = conns[1]!.bytes.split('\r\n\r\n');
  t.match(getHead, /^GET \/v1\/tools HTTP\/1\.1\r\n/);
  t.notMatch(getHead, /authorization|content-length/i, 'no token when none is given, no body on a GET');
  t.match(getHead, /\r\nconnection: close(\r\n|$)/i);
  t.ok(await conns[0]!.ended, 'the client ended the first connection once answered');
  t.ok(await conns[1]!.ended, 'and the second');
});

t.test('an answer split in chunks, chunked or not, is read whole', async (t) => {
  t.plan(2);
  const body = JSON.stringify({ ok: true, result: { stdout: 'x'.repeat(100_000) } });
  const chunked = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  for (const [name, answer] of [
    ['content-length', okAnswer(body)],
    ['chunked', chunked],
  ] as const) {
    const { socket } = await rawServer(t, (s, got) => {
      answerWhenRead(s, got, '');
      s.once('data', () => {
        // in two writes, the second after a pause
        s.write(answer.slice(0, 1000));
        setTimeout(() => s.end(answer.slice(1000)), 20);
      });
    });
    const out = await callDaemon<{ stdout: string }>({ socket }, 'GET', ROUTES.tools);
    t.equal(out.stdout.length, 100_000, name);
  }
});

t.test('nothing sent: DAEMON_UNAVAILABLE with the errno', async (t) => {
  t.plan(2);
  const dir = socketDir(t);
  const missing = join(dir, 'missing.sock');
  t.match(await code(callDaemon({ socket: missing }, 'GET', ROUTES.health)), {
    code: 'DAEMON_UNAVAILABLE',
    details: { socket: missing, errno: 'ENOENT' },
  });
  const notSocket = join(dir, 'file.sock');
  writeFileSync(notSocket, '');
  t.match(await code(callDaemon({ socket: notSocket }, 'GET', ROUTES.health)), {
    code: 'DAEMON_UNAVAILABLE',
    details: { socket: notSocket, errno: 'ECONNREFUSED' },
  });
});

t.test('sent and not answered: DAEMON_NO_ANSWER, whichever way the connection ends', async (t) => {
  t.plan(5);
  const cut = await rawServer(t, (s) => s.once('data', () => s.destroy()));
  t.match(
    await code(callDaemon({ socket: cut.socket }, 'POST', ROUTES.execute, { toolId: 'x', input: {} })),
    {
      code: 'DAEMON_NO_ANSWER',
      message: /ended the connection before answering/,
    },
  );

  const silent = await rawServer(t, () => {});
  const r = await code(callDaemon({ socket: silent.socket, timeoutMs: 200 }, 'GET', ROUTES.tools));
  t.match(r, { code: 'DAEMON_NO_ANSWER', message: /ETIMEDOUT/ }, 'past timeoutMs');
  t.ok(await silent.conns[0]!.ended, 'and the connection is closed');

  const half = await rawServer(t, (s) =>
    s.once('data', () => s.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"ok":true')),
  );
  t.match(await code(callDaemon({ socket: half.socket }, 'GET', ROUTES.tools)), {
    code: 'DAEMON_NO_ANSWER',
  });

  const notJson = await rawServer(t, (s, got) => answerWhenRead(s, got, okAnswer('<html>')));
  t.match(await code(callDaemon({ socket: notJson.socket }, 'GET', ROUTES.tools)), {
    code: 'DAEMON_NO_ANSWER',
    message: /without its JSON envelope/,
  });
});
