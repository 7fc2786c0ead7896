import { rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import t from 'tap';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { GHE, SEED, SEED_SECRETS, seedDeployment } from '../helpers/seed.js';
import { runBinary, spawnDaemon } from './helpers.js';

// The seed-shaped deployment behind the real daemon: gh (GHE endpoint), curl for Atlassian and
// az (bootstrap sign-in) load from one configuration, and the agent reaches each only through
// `clibroker run <tool> -- <args…>`. Then what the sandboxed CLI cannot reach: the socket,
// the configuration, the secret files and the store — even with their directory bound into
// the sandbox, with a file and a socket beside them that it can reach, so the checks can fail.

t.setTimeout(600_000);
const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

t.test(
  'gh, curl and az through clibroker run, and nothing of the daemon reachable from inside',
  async (t) => {
    const d = await seedDeployment((c, dir) => ({
      ...c,
      // the configuration's own directory bound into curl's sandbox: only the masks keep its files out
      images: { ...c.images, curl: { ...c.images['curl']!, readOnlyPaths: [dir.dir] } },
      daemon: { socket: join(dir.dir, 'broker.sock') },
    }));
    const other = join(d.dir.dir, 'other.sock');
    const seen: string[] = [];
    const neighbour = createServer((s: Socket) => {
      s.once('data', (b) => seen.push(b.toString('latin1').split('\r\n')[0]!));
      s.end('HTTP/1.1 200 OK\r\ncontent-length: 9\r\nconnection: close\r\n\r\nneighbour');
    });
    await new Promise<void>((r) => neighbour.listen(other, r));
    const daemon = await spawnDaemon(bin, d.file);
    t.teardown(async () => {
      if (daemon.child.exitCode === null) daemon.child.kill('SIGKILL');
      neighbour.close();
      await d.close();
    });
    t.match(daemon.listening, { tools: ['gh_cli', 'curl_cli', 'az_cli'], withheld: [] });
    const agent = { CLIBROKER_SOCKET: join(d.dir.dir, 'broker.sock') };
    const run = (args: string[]) => runBinary(bin, ['run', ...args], agent);

    const gh = await run(['gh_cli', '--', 'api', 'user']);
    t.match(gh.env, { success: true, data: { exitCode: 0 } }, gh.stdout + gh.stderr);
    t.match(JSON.parse(gh.env.data.stdout), { login: 'octocat' });
    t.ok(
      d.vendor.log.some((r) => r.host === GHE && r.headers.authorization === `token ${SEED.ghToken}`),
      'gh went to the GHE endpoint with the real token',
    );

    const me = await run(['curl_cli', '--', '-sS', 'https://api.atlassian.com/me']);
    t.match(
      JSON.parse(me.env.data.stdout),
      { email: SEED.atlassianUser },
      'the Atlassian credential reached api.atlassian.com',
    );
    const bb = await run([
      'curl_cli',
      '--',
      '-sS',
      '--fail-with-body',
      'https://api.bitbucket.org/2.0/repositories/acme',
    ]);
    t.match(bb.env, { success: true, data: { exitCode: 0 } }, 'api.bitbucket.org got no credential');

    const az = await run(['az_cli', '--', 'group', 'list']);
    t.match(az.env, { success: true, data: { exitCode: 0 } }, az.stdout + az.stderr);
    t.same(
      JSON.parse(az.env.data.stdout).map((g: { name: string }) => g.name),
      ['rg1'],
    );

    // From inside curl's sandbox: the neighbour socket answers, the daemon's does not.
    const near = await run(['curl_cli', '--', '-sS', '--unix-socket', other, 'http://localhost/healthz']);
    t.equal(
      near.env.data.stdout,
      'neighbour',
      "the control: a socket beside the daemon's is reachable from inside",
    );
    const sock = await run([
      'curl_cli',
      '--',
      '-sS',
      '--unix-socket',
      join(d.dir.dir, 'broker.sock'),
      'http://localhost/healthz',
    ]);
    t.equal(sock.env.data.exitCode, 7, `the daemon's socket is not: ${sock.env.data.stderr}`);
    // Files: a neighbour is readable, the configuration, the secrets and the store are not.
    const send = async (file: string): Promise<string> => {
      await run([
        'curl_cli',
        '--',
        '-sS',
        '-G',
        '--data-urlencode',
        `c@${file}`,
        'https://api.bitbucket.org/2.0/repositories/acme',
      ]);
      return d.vendor.log.at(-1)?.query.get('c') ?? '';
    };
    t.match(
      await send(join(d.dir.dir, 'vendor-ca.pem')),
      /BEGIN CERTIFICATE/,
      'the control: a file of that directory is readable',
    );
    t.equal(await send(d.file), '', 'the configuration is not');
    for (const f of ['gh', 'atlassian', 'azure'])
      t.equal(await send(join(d.dir.dir, `${f}.secret`)), '', `the ${f} secret file is not`);
    t.equal(await send(join(d.dir.dir, 'state', 'store.db')), '', 'the store is not');

    const all =
      [gh, me, bb, az, near, sock].map((r) => r.stdout + r.stderr).join('\n') + daemon.out() + daemon.err();
    for (const s of SEED_SECRETS) t.notOk(all.includes(s), 'no secret in any output');
    t.notOk(
      d.vendor.log.some((r) => SEED_SECRETS.some((s) => r.query.toString().includes(s))),
      'no secret reached the vendor in a query',
    );
    daemon.child.kill('SIGTERM');
    t.equal(await daemon.exited, 0);
  },
);
