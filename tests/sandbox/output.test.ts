/**
 * The CLI's output after it has talked to the broker: in every profile its stdio stays
 * blocking, and more than 3 MiB written fast (curl streaming a download to stdout, a writer
 * after a connection) is delivered and cut at exactly 2 MiB. The isolated profile is the one
 * that can fail: its launcher (perl, or node where perl does not run: both are checked)
 * shares the CLI's stdio and bridges the connections.
 */
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { runSandboxed, type SandboxOptions } from '../../src/sandbox/index.js';
import { startUpstream } from '../helpers/upstream.js';
import { opts, variants } from './helpers.js';

const MiB = 1024 * 1024;
const BIG = 3.5 * MiB;
const O_NONBLOCK = 0o4000;

const upstream = await startUpstream(['api.example.com']);
upstream.route((req, res) => {
  const body = req.url === '/big' ? Buffer.alloc(BIG, 'a') : Buffer.from('{"ok":true}');
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
  res.end(body);
});
const broker = await createBroker({
  upstream: { ca: upstream.pki.caPem, resolve: upstream.resolve, allowAddresses: ['127.0.0.0/8'] },
});
t.teardown(async () => {
  await broker.close();
  await upstream.close();
});
const session = broker.openSession({ egress: ['api.example.com'] });

/** `sh -c script` with the broker session as its proxy. */
const viaBroker = (script: string, variant: Partial<SandboxOptions>, more = {}) => ({
  ...opts('sh', ['-c', script]),
  ...variant,
  session,
  ...more,
});

for (const { name, profile, more: variant } of await variants()) {
  t.test(
    `${name}: the CLI's stdin, stdout and stderr stay blocking after a connection through the broker`,
    async (t) => {
      // The pause lets the launcher also close its side of curl's connection (a second path that opened them).
      const r = await runSandboxed(
        viaBroker(
          'curl -sS -o /dev/null https://api.example.com/small && sleep 0.2 && grep -h flags /proc/$$/fdinfo/0 /proc/$$/fdinfo/1 /proc/$$/fdinfo/2',
          variant,
          { stdin: Buffer.from('in') },
        ),
      );
      t.equal(r.profile, profile);
      t.equal(r.exitCode, 0, r.stderr);
      const flags = [...r.stdout.matchAll(/^flags:\s+([0-7]+)$/gm)].map((m) => Number.parseInt(m[1]!, 8));
      t.equal(flags.length, 3, r.stdout);
      t.same(
        flags.map((f) => (f & O_NONBLOCK) !== 0),
        [false, false, false],
        `no O_NONBLOCK on fds 0-2 (${r.stdout.trim().replace(/\s+/g, ' ')})`,
      );
    },
  );

  t.test(
    `${name}: curl streaming a 3.5 MiB download to stdout is delivered and cut at exactly 2 MiB`,
    async (t) => {
      const r = await runSandboxed(viaBroker('exec curl -sS https://api.example.com/big', variant));
      t.equal(r.profile, profile);
      t.equal(r.exitCode, 0, `curl wrote everything without a write error: ${r.stderr.slice(0, 300)}`);
      t.equal(r.stderr, '');
      t.equal(r.truncated, true);
      t.equal(Buffer.byteLength(r.stdout), 2 * MiB, 'exactly the cap kept');
      t.match(r.stdout, /^a+$/, 'the bytes are the download, in order');
    },
  );

  t.test(
    `${name}: a fast writer after a connection through the broker writes 3.5 MiB without EAGAIN`,
    async (t) => {
      const r = await runSandboxed(
        viaBroker(
          `curl -sS -o /dev/null https://api.example.com/small && head -c ${BIG} /dev/zero | tr '\\0' b`,
          variant,
        ),
      );
      t.equal(r.exitCode, 0, `no write error: ${r.stderr.slice(0, 300)}`);
      t.equal(r.stderr, '');
      t.equal(r.truncated, true);
      t.equal(Buffer.byteLength(r.stdout), 2 * MiB);
      t.match(r.stdout, /^b+$/);
    },
  );
}
