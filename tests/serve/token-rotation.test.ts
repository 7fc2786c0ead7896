/**
 * docs/daemon.md ("The executor token") and docs/serve.md: a front door's token is read from
 * its reference at every request, so a rotated token file takes effect at once — the old token
 * is refused at the next request and the new one accepted, with no restart. Both front doors
 * are started the way their commands start them (serveDaemon and serveHttp: the loader, the
 * host, the start's own wiring), over the seed deployment, the token in a 0600 file rewritten
 * in place.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { createLogger } from '../../src/audit/logger.js';
import { callDaemon } from '../../src/daemon/client.js';
import { serveDaemon } from '../../src/daemon/serve.js';
import { seedDeployment } from '../helpers/seed.js';
import { serveFromConfig, TOKENS } from './helpers.js';

t.setTimeout(300_000);

const strong = (): string => randomBytes(32).toString('hex');

/** Rewrites a secret file in place (same path), mode 0600 as an operator's rotation leaves it. */
function rotate(file: string, value: string): void {
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** The signal serveDaemon is stopped with here (serveFromConfig stops serve with SIGUSR2 too; the tests run one at a time). */
const SIGNAL = 'SIGUSR2';

t.test(
  "the daemon's executor token file, rotated: the old token refused, the new one accepted",
  async (t) => {
    const OLD = strong();
    const NEW = strong();
    const d = await seedDeployment((c, dir) => ({
      ...c,
      daemon: { socket: join(dir.dir, 'broker.sock'), executorToken: dir.secret('daemon-executor', OLD) },
    }));
    const socket = join(d.dir.dir, 'broker.sock');
    let listened!: () => void;
    const listening = new Promise<void>((resolve) => {
      listened = resolve;
    });
    const stopped = serveDaemon(d.file, {
      signals: [SIGNAL],
      out: () => listened(),
      logger: createLogger({ level: 'silent' }),
    });
    await Promise.race([
      listening,
      stopped.then((s) => {
        throw new Error(`stopped before listening: ${JSON.stringify(s)}`);
      }),
    ]);
    t.teardown(async () => {
      process.kill(process.pid, SIGNAL);
      await stopped;
      await d.close();
    });
    const tools = (token: string) =>
      callDaemon<{ tools: { name: string }[] }>({ socket, token }, 'GET', '/v1/tools').catch(
        (e: unknown) => e,
      );

    t.match(
      await tools(OLD),
      { tools: [{ name: 'gh_cli' }] },
      'the old token is accepted before the rotation',
    );
    const file = (d.config.daemon!.executorToken as { file: string }).file;
    rotate(file, NEW);
    t.equal(statSync(file).mode & 0o777, 0o600);
    t.match(
      await tools(OLD),
      { code: 'DAEMON_UNAUTHORIZED' },
      'the old token is refused at the next request',
    );
    t.match(await tools(NEW), { tools: [{ name: 'gh_cli' }] }, 'the new token is accepted, no restart');
    t.match(await tools(OLD), { code: 'DAEMON_UNAUTHORIZED' }, 'and the old one stays refused');
  },
);

t.test("serve's executor token file, rotated: the old token refused, the new one accepted", async (t) => {
  const NEW = strong();
  const s = await serveFromConfig((dir) => ({ executorToken: dir.secret('executor', TOKENS.executor) }));
  t.teardown(() => s.stop());
  const tools = async (token: string) => {
    const r = await fetch(`${s.url}/v1/tools`, { headers: { authorization: `Bearer ${token}` } });
    return { status: r.status, json: await r.json() };
  };

  t.match(await tools(TOKENS.executor), { status: 200, json: { ok: true } }, 'the old token works before');
  const file = (s.d.config.serve!.executorToken as { file: string }).file;
  rotate(file, NEW);
  t.equal(statSync(file).mode & 0o777, 0o600);
  const old = await tools(TOKENS.executor);
  t.equal(old.status, 401, 'the old token is refused at the next request');
  t.match(old.json, { ok: false });
  t.match(await tools(NEW), { status: 200, json: { ok: true } }, 'the new token is accepted, no restart');
});
