/**
 * docs/daemon.md, "The socket": removed on close, and only if it is still the daemon's own
 * (same inode). A restart race: the first daemon's socket name was taken from it (removed, as
 * an operator or a cleaner would) and a second daemon now serves at the same path; when the
 * first daemon stops, the second's socket must stay where it is and keep answering. The same
 * for a plain file someone put at the path. Real daemons over a real host (the seed
 * deployment's configuration), on a real unix socket.
 */
import { lstatSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { callDaemon } from '../../src/daemon/client.js';
import { startDaemon } from '../../src/daemon/server.js';
import { createHost } from '../../src/host/host.js';
import { seedDeployment } from '../helpers/seed.js';

async function setup(t: { teardown(fn: () => unknown): void }) {
  const d = await seedDeployment();
  const host = await createHost(await loadConfig(d.file));
  t.teardown(async () => {
    await host.close();
    await d.close();
  });
  return { d, host, socket: join(d.dir.dir, 'broker.sock') };
}

t.test("a daemon's close leaves the socket of the daemon that took its path", async (t) => {
  const { host, socket } = await setup(t);
  const first = await startDaemon(host, { socket, closeGraceMs: 1_000 });
  t.teardown(() => first.close());
  const firstIno = lstatSync(socket).ino;
  t.same(await callDaemon({ socket }, 'GET', '/healthz'), { status: 'ok' }, 'the first daemon answers');

  // The restart race: the first daemon's name is gone, and a second daemon binds the same path.
  unlinkSync(socket);
  const second = await startDaemon(host, { socket, closeGraceMs: 1_000 });
  t.teardown(() => second.close());
  const secondIno = lstatSync(socket).ino;
  t.not(secondIno, firstIno, 'the path now names the second daemon’s socket');

  await first.close();
  const after = lstatSync(socket, { throwIfNoEntry: false });
  t.ok(after?.isSocket(), "the second daemon's socket is still at the path");
  t.equal(after?.ino, secondIno, 'the same socket, not a new one');
  t.same(
    await callDaemon({ socket }, 'GET', '/healthz').catch((e: unknown) => e),
    { status: 'ok' },
    'and the second daemon still answers on it',
  );

  await second.close();
  t.notOk(lstatSync(socket, { throwIfNoEntry: false }), 'the second daemon removes its own socket');
});

t.test('a file put at the path after the daemon bound is left alone at close', async (t) => {
  const { host, socket } = await setup(t);
  const daemon = await startDaemon(host, { socket, closeGraceMs: 1_000 });
  t.teardown(() => daemon.close());
  unlinkSync(socket);
  writeFileSync(socket, 'not the daemon’s\n', { mode: 0o600 });
  await daemon.close();
  t.equal(
    lstatSync(socket, { throwIfNoEntry: false }) && readFileSync(socket, 'utf8'),
    'not the daemon’s\n',
    'the file is still there, unchanged',
  );
});

t.test('control: a daemon whose socket is still its own removes it at close', async (t) => {
  const { host, socket } = await setup(t);
  const daemon = await startDaemon(host, { socket, closeGraceMs: 1_000 });
  t.ok(lstatSync(socket).isSocket());
  await daemon.close();
  t.notOk(lstatSync(socket, { throwIfNoEntry: false }), 'removed');
});
