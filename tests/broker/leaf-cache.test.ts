/**
 * How a session's hosts share leaves: a short egress list gets one leaf built when the session
 * opens; a long one is minted a group at a time on first use, each leaf naming a bounded set
 * of hosts; the cache of contexts stays within its bound; a host outside the list still gets a
 * leaf of its own and its refusal in-band. Real broker, real CONNECTs, real TLS.
 */
import t from 'tap';
import { createCertificateAuthority } from '../../src/broker/ca.js';
import { LEAF_GROUP_HOSTS, LeafCache, leafSet } from '../../src/broker/leaf-cache.js';
import type { Session } from '../../src/broker/session.js';
import { brokerFixture, exchange, openTunnel } from '../helpers/broker.js';

const names = (n: number, domain = 'bench.example'): string[] =>
  Array.from({ length: n }, (_, i) => `h${i}.${domain}`);

/** The leaf a CONNECT to `host` is answered with: its serial and the names it carries. */
async function leafOf(s: Session, port: number, host: string): Promise<{ serial: string; names: string[] }> {
  const tls = await openTunnel(s, port, host);
  const cert = tls.getPeerCertificate();
  tls.destroy();
  return {
    serial: cert.serialNumber,
    names: (cert.subjectaltname ?? '').split(', ').map((n) => n.replace(/^DNS:/, '')),
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

t.test('a 640-host session mints no leaf when it opens, and one per group on first use', async (t) => {
  t.plan(7);
  const f = await brokerFixture(t, { hosts: ['h5.bench.example'] });
  const egress = names(640);
  // A name-constrained session keeps a cache of its own, so what it mints can be counted.
  const s = f.session({ egress, nameConstrainedCa: true });
  await tick();
  t.equal(s.leaves!.size, 0, 'nothing minted at open');
  const first = await leafOf(s, f.broker.port, 'h5.bench.example');
  t.equal(s.leaves!.size, 1, 'one leaf for the first CONNECT');
  t.ok(first.names.includes('h5.bench.example'), 'it names the host');
  t.ok(first.names.length <= LEAF_GROUP_HOSTS, `it names at most ${LEAF_GROUP_HOSTS} hosts`);
  t.ok(
    first.names.every((n) => egress.includes(n)),
    'and only hosts of the egress list',
  );
  const neighbour = first.names.find((n) => n !== 'h5.bench.example')!;
  const again = await leafOf(s, f.broker.port, neighbour);
  t.equal(again.serial, first.serial, 'another host of its group gets the same leaf');
  t.equal(s.leaves!.size, 1, 'and no new context');
});

t.test('a leaf names a bounded set of hosts whatever the length of the list', async (t) => {
  const cases: Record<string, { hosts: number; named: number }> = {
    'two hosts: one leaf for both': { hosts: 2, named: 2 },
    'sixteen hosts: one leaf for all': { hosts: 16, named: 16 },
    'seventeen hosts: a group': { hosts: 17, named: LEAF_GROUP_HOSTS },
    'a hundred hosts: a group': { hosts: 100, named: LEAF_GROUP_HOSTS },
    '640 hosts: a group': { hosts: 640, named: LEAF_GROUP_HOSTS },
  };
  t.plan(Object.keys(cases).length * 2);
  const f = await brokerFixture(t, { hosts: ['h0.bench.example'] });
  for (const [name, c] of Object.entries(cases)) {
    const leaf = await leafOf(f.session({ egress: names(c.hosts) }), f.broker.port, 'h0.bench.example');
    t.ok(leaf.names.includes('h0.bench.example'), `${name}: names the host`);
    t.equal(leaf.names.length, c.named, `${name}: names ${c.named}`);
  }
});

t.test('a short egress list has its one leaf built when the session opens', async (t) => {
  t.plan(2);
  const f = await brokerFixture(t, { hosts: ['h0.bench.example'] });
  const s = f.session({ egress: names(16), nameConstrainedCa: true });
  t.equal(s.leaves!.size, 0, 'not inside openSession itself');
  await tick();
  t.equal(s.leaves!.size, 1, 'but on the next turn, off the first CONNECT');
});

t.test("one vendor's hosts share a group", async (t) => {
  const github = ['api.github.com', 'github.com', 'uploads.github.com', 'codeload.github.com'];
  const set = leafSet([...names(40, 'a.example'), ...github, ...names(40, 'z.example')])!;
  t.plan(github.length + 1);
  t.equal(set.whole, undefined, 'no single leaf for 84 hosts');
  const group = set.groupOf('api.github.com')!;
  for (const h of github) t.equal(set.groupOf(h), group, `${h} shares api.github.com's leaf`);
});

t.test('the cache of contexts holds at most its bound, least recently used out first', async (t) => {
  t.plan(5);
  const cache = new LeafCache(createCertificateAuthority(), 4);
  const hosts = names(6);
  const first = cache.forHost(hosts[0]!, undefined);
  const second = cache.forHost(hosts[1]!, undefined);
  for (const h of hosts.slice(2, 4)) cache.forHost(h, undefined);
  t.equal(cache.forHost(hosts[0]!, undefined), first, 'a hit returns the same context');
  cache.forHost(hosts[4]!, undefined);
  cache.forHost(hosts[5]!, undefined);
  t.equal(cache.size, 4, 'six hosts, four contexts');
  t.equal(cache.forHost(hosts[0]!, undefined), first, 'the one just used stayed');
  t.not(cache.forHost(hosts[1]!, undefined), second, 'the least recent was dropped and minted again');
  t.equal(cache.size, 4, 'still four after that miss');
});

t.test('a host outside a 640-host list gets a leaf of its own and its refusal in-band', async (t) => {
  t.plan(4);
  const f = await brokerFixture(t, { hosts: ['h0.bench.example', 'outside.example.net'] });
  const s = f.session({ egress: names(640) });
  const leaf = await leafOf(s, f.broker.port, 'outside.example.net');
  t.same(leaf.names, ['outside.example.net'], 'a leaf naming only it');
  const tls = await openTunnel(s, f.broker.port, 'outside.example.net');
  const answer = await exchange(
    tls,
    'GET /x HTTP/1.1\r\nHost: outside.example.net\r\nConnection: close\r\n\r\n',
    (out) => out.includes('\r\n\r\n') && out.includes('}'),
  );
  tls.destroy();
  t.match(answer, /^HTTP\/1\.1 422 /, 'answered in-band');
  t.match(answer, /CLI_EGRESS_HOST_DENIED/, 'with the egress refusal');
  t.equal(f.upstream.received.length, 0, 'nothing reached the vendor');
});
