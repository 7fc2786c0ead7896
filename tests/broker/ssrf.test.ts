/**
 * The upstream address rule, over real sockets: an egress name whose answer is a loopback,
 * link-local, private, CGNAT, unique-local, unspecified or other special-purpose address is
 * refused with a coded 4xx unless the operator allows that range; the address checked is the
 * address connected to (a rebinding answer gets no second chance); SNI and the certificate
 * check stay on the real name. DNS answers are emulated with the `upstream.lookup` hook.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import t from 'tap';
import { addressPolicy, SPECIAL_RANGES } from '../../src/broker/address.js';
import { createBroker } from '../../src/broker/broker.js';
import type { AuditEvent, BrokerOptions } from '../../src/broker/types.js';
import { exchange, openTunnel } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';
import { leakGuard, proxySecret } from '../helpers/leaks.js';
import { testPki } from '../helpers/pki.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

const pki = testPki();
const HOST = 'api.example.com';

interface Origin {
  port: number;
  /** one per TCP connection accepted: the local address it arrived on and the SNI it sent */
  connections: { local: string; sni: string | false | null }[];
  requests: number;
}

/** An HTTPS origin on `address` holding a certificate for api.example.com only. */
async function origin(
  t: Teardown,
  address: string,
  port = 0,
  opts: { close?: boolean } = {},
): Promise<Origin> {
  const leaf = pki.leaf(HOST);
  const o: Origin = { port: 0, connections: [], requests: 0 };
  const server: Server = createServer({ key: leaf.key, cert: leaf.cert });
  server.on('secureConnection', (s: TLSSocket) =>
    o.connections.push({ local: s.localAddress ?? '', sni: s.servername }),
  );
  server.on('request', (req, res) => {
    o.requests++;
    req.resume();
    const body = JSON.stringify({ at: req.socket.localAddress });
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      ...(opts.close ? { connection: 'close' } : {}),
    });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(port, address, r));
  o.port = (server.address() as AddressInfo).port;
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  );
  return o;
}

/** A broker with these upstream options (its CA trusted), a leak guard and an audit log. */
async function broker(t: Teardown, upstream: NonNullable<BrokerOptions['upstream']>) {
  const events: AuditEvent[] = [];
  const guard = leakGuard([]);
  const b = await createBroker({
    upstream: { ca: pki.caPem, ...upstream },
    logger: guard.logger,
    onAudit: (e) => {
      events.push(e);
      guard.onAudit(e);
    },
  });
  t.teardown(async () => {
    await b.close();
    guard.assertClean();
  });
  const session = (egress = [HOST], tier: 'read' | 'write' = 'read') => {
    const s = b.openSession({ egress, tier });
    guard.watch(proxySecret(s.proxyUrl));
    return s;
  };
  return { broker: b, events, session };
}

/** An emulated DNS: every lookup answers `answer` as it is at that moment; `calls` counts lookups. */
function dns(initial: string[]) {
  const d = {
    answer: initial,
    calls: 0,
    lookup: async (host: string) => {
      d.calls++;
      if (host !== HOST && host !== 'other.example.com')
        throw Object.assign(new Error(`unexpected lookup of ${host}`), { code: 'ENOTFOUND' });
      return d.answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
  };
  return d;
}

const GET = (path = '/x', host = HOST) => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
const complete = (o: string) => {
  const end = o.indexOf('\r\n\r\n');
  const len = /content-length: (\d+)/i.exec(o);
  return end !== -1 && len !== null && o.length >= end + 4 + Number(len[1]);
};
function parse(raw: string): { status: number; body: Record<string, unknown> } {
  const end = raw.indexOf('\r\n\r\n');
  return {
    status: Number(raw.slice(9, 12)),
    body: JSON.parse(raw.slice(end + 4)) as Record<string, unknown>,
  };
}

// Special-purpose answers, each with the range the refusal must name.
const REFUSED: Record<string, [string, string]> = {
  loopback: ['127.0.0.1', '127.0.0.0/8'],
  'loopback, top of the range': ['127.255.255.254', '127.0.0.0/8'],
  'cloud metadata': ['169.254.169.254', '169.254.0.0/16'],
  'link-local': ['169.254.0.1', '169.254.0.0/16'],
  'private 10/8': ['10.0.0.1', '10.0.0.0/8'],
  'private 10/8, top': ['10.255.255.255', '10.0.0.0/8'],
  'private 172.16/12': ['172.16.0.1', '172.16.0.0/12'],
  'private 172.16/12, top': ['172.31.255.255', '172.16.0.0/12'],
  'private 192.168/16': ['192.168.1.1', '192.168.0.0/16'],
  CGNAT: ['100.64.0.1', '100.64.0.0/10'],
  'CGNAT, top (Alibaba metadata is 100.100.100.200)': ['100.127.255.255', '100.64.0.0/10'],
  unspecified: ['0.0.0.0', '0.0.0.0/8'],
  'this network': ['0.1.2.3', '0.0.0.0/8'],
  multicast: ['224.0.0.1', '224.0.0.0/4'],
  'multicast, SSDP': ['239.255.255.250', '224.0.0.0/4'],
  'limited broadcast': ['255.255.255.255', '255.255.255.255/32'],
  'reserved 240/4': ['240.0.0.1', '240.0.0.0/4'],
  'IETF protocol assignments': ['192.0.0.170', '192.0.0.0/24'],
  documentation: ['192.0.2.1', '192.0.2.0/24'],
  benchmarking: ['198.18.0.1', '198.18.0.0/15'],
  'IPv6 loopback': ['::1', '::1/128'],
  'IPv6 unspecified': ['::', '::/128'],
  'IPv4-mapped loopback, dotted': ['::ffff:127.0.0.1', '127.0.0.0/8'],
  'IPv4-mapped loopback, hex': ['::ffff:7f00:1', '127.0.0.0/8'],
  'IPv4-mapped metadata': ['::ffff:169.254.169.254', '169.254.0.0/16'],
  'IPv4-mapped, long form': ['0:0:0:0:0:ffff:a00:1', '10.0.0.0/8'],
  'IPv4-compatible (deprecated)': ['::127.0.0.1', '::/96'],
  'IPv4-translated': ['::ffff:0:7f00:1', '::/8'],
  'NAT64 embedding a private address': ['64:ff9b::a00:1', '10.0.0.0/8'],
  'NAT64 embedding loopback, dotted': ['64:ff9b::127.0.0.1', '127.0.0.0/8'],
  'NAT64 local-use': ['64:ff9b:1::1', '64:ff9b:1::/48'],
  '6to4 embedding a private address': ['2002:c0a8:101::1', '192.168.0.0/16'],
  '6to4 embedding metadata': ['2002:a9fe:a9fe::', '169.254.0.0/16'],
  'IPv6 link-local': ['fe80::1', 'fe80::/10'],
  'IPv6 link-local with a zone': ['fe80::1%lo', 'fe80::/10'],
  'unique-local fd00::/8': ['fd12:3456::1', 'fc00::/7'],
  'unique-local fc00::/8': ['fc00::1', 'fc00::/7'],
  'site-local (deprecated)': ['fec0::1', 'fec0::/10'],
  'IPv6 multicast': ['ff02::1', 'ff00::/8'],
  Teredo: ['2001::1', '2001::/32'],
  'IPv6 documentation': ['2001:db8::1', '2001:db8::/32'],
  'discard-only': ['100::1', '100::/64'],
};

t.test('every special-purpose answer is refused with a coded 422 that reaches the child', async (t) => {
  const names = Object.keys(REFUSED);
  t.plan(names.length + 3);
  const d = dns([]);
  const b = await broker(t, { lookup: d.lookup });
  const s = b.session();
  const tls = await openTunnel(s, b.broker.port, HOST);
  t.teardown(() => tls.destroy());
  for (const name of names) {
    const [address, range] = REFUSED[name]!;
    d.answer = [address];
    const r = parse(await exchange(tls, GET(), complete));
    const error = r.body.error as Record<string, unknown>;
    t.match(
      {
        status: r.status,
        code: error.code,
        policyCode: error.policyCode,
        range: (error.details as Record<string, unknown>).range,
      },
      { status: 422, code: 'POLICY_BLOCKED', policyCode: 'CLI_EGRESS_ADDRESS_DENIED', range },
      `${name} (${address})`,
    );
  }
  t.equal(b.events.length, names.length, 'one audit event per refusal');
  t.ok(
    b.events.every(
      (e) =>
        e.type === 'egress.blocked' &&
        e.code === 'POLICY_BLOCKED' &&
        e.policyCode === 'CLI_EGRESS_ADDRESS_DENIED',
    ),
    'each audited as egress.blocked / CLI_EGRESS_ADDRESS_DENIED',
  );
  t.equal(d.calls, names.length, 'one lookup per connection attempt');
});

t.test(
  'the refusal as real curl shows it: names the host, the kind and the range, never the address',
  async (t) => {
    const d = dns(['10.1.2.3']);
    const b = await broker(t, { lookup: d.lookup });
    const r = await curl(b.session(), ['-i', `https://${HOST}/repos`]);
    t.match(r.stdout, /^HTTP\/1\.1 422 Unprocessable Entity/);
    const body = JSON.parse(r.stdout.slice(r.stdout.indexOf('\r\n\r\n') + 4)) as { message: string };
    t.equal(
      body.message,
      'CLI_EGRESS_ADDRESS_DENIED: api.example.com resolves to a private address (10.0.0.0/8), which clibroker does not connect to, so the request was not sent. Point the name at a public address, or have the operator allow that range (upstream.allowAddresses).',
    );
    t.notMatch(r.stdout, /10\.1\.2\.3/, 'the resolved address is not echoed');
    t.notMatch(JSON.stringify(b.events), /10\.1\.2\.3/);
  },
);

/** The origins listen on a free port, not 443: resolve moves the port and keeps the name, which the lookup hook answers. */
const onPort = (port: number) => () => ({ host: HOST, port });

/** One request on a fresh tunnel; the origins close after each answer, so every request connects anew. */
async function get(b: Awaited<ReturnType<typeof broker>>, host = HOST) {
  const tls = await openTunnel(b.session([HOST, 'other.example.com']), b.broker.port, host);
  try {
    return parse(await exchange(tls, GET('/x', host), complete));
  } finally {
    tls.destroy();
  }
}

t.test('a request with a body gets the same refusal, whole, and nothing is sent', async (t) => {
  const d = dns(['169.254.169.254']);
  const b = await broker(t, { lookup: d.lookup });
  const body = Buffer.alloc(200 * 1024, 'a');
  const r = await curl(
    b.session([HOST], 'write'),
    ['-i', '-X', 'PUT', '--data-binary', '@-', `https://${HOST}/latest/api/token`],
    { stdin: body },
  );
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^HTTP\/1\.1 422 /);
  t.match(r.stdout, /CLI_EGRESS_ADDRESS_DENIED/);
  t.match(b.events, [{ type: 'egress.blocked', method: 'PUT', policyCode: 'CLI_EGRESS_ADDRESS_DENIED' }]);
});

t.test(
  'an allowed range opens exactly that range, and the connection goes to the checked address',
  async (t) => {
    const two = await origin(t, '127.0.0.2', 0, { close: true });
    const one = await origin(t, '127.0.0.1', two.port, { close: true });
    const six = await origin(t, '::1', two.port, { close: true });
    const d = dns([]);

    const narrow = await broker(t, {
      lookup: d.lookup,
      resolve: onPort(two.port),
      allowAddresses: ['127.0.0.2/32'],
    });
    d.answer = ['127.0.0.2'];
    t.match(
      await get(narrow),
      { status: 200, body: { at: '127.0.0.2' } },
      '127.0.0.2/32 allowed: served by 127.0.0.2',
    );
    t.same(
      two.connections,
      [{ local: '127.0.0.2', sni: HOST }],
      'one connection, to the checked address, SNI the real name',
    );
    for (const address of ['127.0.0.1', '::ffff:127.0.0.1', '::1', '10.0.0.1']) {
      d.answer = [address];
      t.match(
        await get(narrow),
        { status: 422, body: { error: { policyCode: 'CLI_EGRESS_ADDRESS_DENIED' } } },
        `127.0.0.2/32 does not open ${address}`,
      );
    }

    const loopback4 = await broker(t, {
      lookup: d.lookup,
      resolve: onPort(two.port),
      allowAddresses: ['127.0.0.0/8'],
    });
    for (const [address, at] of [
      ['127.0.0.1', '127.0.0.1'],
      ['::ffff:127.0.0.1', '127.0.0.1'],
      ['127.0.0.2', '127.0.0.2'],
    ] as const) {
      d.answer = [address];
      t.match(await get(loopback4), { status: 200, body: { at } }, `127.0.0.0/8 allowed: ${address}`);
    }
    for (const address of ['::1', '10.0.0.1', '169.254.169.254', '64:ff9b::a00:1']) {
      d.answer = [address];
      t.match(await get(loopback4), { status: 422 }, `127.0.0.0/8 does not open ${address}`);
    }

    const loopback6 = await broker(t, {
      lookup: d.lookup,
      resolve: onPort(two.port),
      allowAddresses: ['::1'],
    });
    d.answer = ['::1'];
    t.match(await get(loopback6), { status: 200, body: { at: '::1' } }, '::1 allowed');
    d.answer = ['127.0.0.1'];
    t.match(await get(loopback6), { status: 422 }, '::1 does not open 127.0.0.1');
    t.equal(six.connections.length, 1);
    t.equal(
      one.connections.length,
      2,
      '127.0.0.1 reached only while 127.0.0.0/8 was allowed (plain and IPv4-mapped)',
    );
    t.end();
  },
);

t.test('upstream.resolve passes the same rule: routing to loopback needs the opt-in', async (t) => {
  const o = await origin(t, '127.0.0.1');
  const resolve = () => ({ host: '127.0.0.1', port: o.port });
  const closed = await broker(t, { resolve });
  t.match(await get(closed), {
    status: 422,
    body: {
      error: {
        code: 'POLICY_BLOCKED',
        policyCode: 'CLI_EGRESS_ADDRESS_DENIED',
        details: { range: '127.0.0.0/8' },
      },
    },
  });
  t.equal(o.connections.length, 0, 'nothing connected');
  const open = await broker(t, { resolve, allowAddresses: ['127.0.0.0/8'] });
  t.match(await get(open), { status: 200, body: { at: '127.0.0.1' } });
  const metadata = await broker(t, {
    resolve: () => ({ host: '169.254.169.254', port: 80 }),
    allowAddresses: ['127.0.0.0/8'],
  });
  t.match(
    await get(metadata),
    { status: 422, body: { error: { details: { range: '169.254.0.0/16' } } } },
    'a mapping to the metadata address',
  );
});

t.test('a DNS answer that mixes public-looking and special-purpose addresses is refused whole', async (t) => {
  const two = await origin(t, '127.0.0.2', 0, { close: true });
  const d = dns([]);
  const b = await broker(t, {
    lookup: d.lookup,
    resolve: onPort(two.port),
    allowAddresses: ['127.0.0.2/32'],
  });
  for (const answer of [
    ['127.0.0.2', '10.0.0.1'],
    ['10.0.0.1', '127.0.0.2'],
    ['127.0.0.2', 'fd00::1'],
    ['127.0.0.2', '::ffff:169.254.169.254'],
  ]) {
    d.answer = answer;
    t.match(
      await get(b),
      { status: 422, body: { error: { policyCode: 'CLI_EGRESS_ADDRESS_DENIED' } } },
      answer.join(', '),
    );
  }
  t.equal(two.connections.length, 0, 'the allowed address of a mixed answer is not used either');
});

t.test(
  'DNS rebinding: the answer that was checked is the one connected to; a changed answer gets no second lookup',
  async (t) => {
    const good = await origin(t, '127.0.0.2', 0, { close: true });
    const internal = await origin(t, '127.0.0.1', good.port, { close: true });
    let calls = 0;
    // a rebinding server: a permitted answer first, the internal service on every later lookup
    const lookup = async () => [{ address: ++calls === 1 ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    const b = await broker(t, { lookup, resolve: onPort(good.port), allowAddresses: ['127.0.0.2/32'] });
    t.match(await get(b), { status: 200, body: { at: '127.0.0.2' } }, 'first connection: the checked answer');
    t.equal(calls, 1, 'one lookup for one connection');
    t.match(
      await get(b),
      { status: 422, body: { error: { policyCode: 'CLI_EGRESS_ADDRESS_DENIED' } } },
      'next connection: the rebound answer is refused',
    );
    t.equal(calls, 2);
    t.equal(internal.connections.length, 0, 'the internal service was never reached');
    t.equal(good.connections.length, 1);
  },
);

t.test(
  'an address that refuses the connection falls through to the next checked one (node races only the checked answer)',
  async (t) => {
    const two = await origin(t, '127.0.0.2', 0, { close: true });
    const d = dns(['127.0.0.4', '127.0.0.2']); // nothing listens on 127.0.0.4
    const b = await broker(t, {
      lookup: d.lookup,
      resolve: onPort(two.port),
      allowAddresses: ['127.0.0.0/8'],
    });
    t.match(await get(b), { status: 200, body: { at: '127.0.0.2' } });
  },
);

t.test(
  'the certificate is still checked against the real name, and lookup failures stay upstream failures',
  async (t) => {
    const two = await origin(t, '127.0.0.2');
    const d = dns(['127.0.0.2']);
    const b = await broker(t, {
      lookup: d.lookup,
      resolve: onPort(two.port),
      allowAddresses: ['127.0.0.2/32'],
    });
    const r = await get(b, 'other.example.com'); // the origin holds a certificate for api.example.com only
    t.match(r, { status: 502, body: { error: { code: 'UPSTREAM_UNAVAILABLE' } } });
    t.equal(two.requests, 0, 'nothing sent over a connection whose certificate does not name the host');
    d.answer = [];
    t.match(
      await get(b),
      { status: 502, body: { error: { code: 'UPSTREAM_UNAVAILABLE' } } },
      'an empty answer',
    );
    d.answer = ['127.0.0.2', 'localhost'];
    t.match(
      await get(b),
      { status: 502, body: { error: { code: 'UPSTREAM_UNAVAILABLE' } } },
      'an answer that is not an address',
    );
    const failing = await broker(t, {
      lookup: async () =>
        Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })),
    });
    t.match(
      await get(failing),
      { status: 502, body: { error: { code: 'UPSTREAM_UNAVAILABLE' } } },
      'a failed lookup',
    );
  },
);

t.test(
  'createBroker refuses a malformed allowAddresses entry with BROKER_OPTIONS_INVALID naming the entry and saying why',
  async (t) => {
    const bad: Record<string, [unknown, RegExp]> = {
      'host bits set': [['10.1.2.3/8'], /allowAddresses\[0\]: "10\.1\.2\.3\/8" .*write "10\.0\.0\.0\/8"/],
      'IPv6 host bits set': [['::1', 'fe80::1/10'], /allowAddresses\[1\]: .*write "fe80::\/10"/],
      'prefix too long': [['127.0.0.0/33'], /from 0 to 32/],
      'prefix not a number': [['127.0.0.0/eight'], /from 0 to 32/],
      'prefix with a leading zero': [['127.0.0.0/08'], /from 0 to 32/],
      'a name, not an address': [['localhost'], /expected an IPv4 or IPv6 address/],
      'empty string': [[''], /expected an IPv4 or IPv6 address/],
      'a zone': [['fe80::%eth0/10'], /expected an IPv4 or IPv6 address/],
      'not a string': [[42], /must be a string/],
      'not an array': ['127.0.0.0/8', /must be an array/],
    };
    t.plan(Object.keys(bad).length + 1);
    for (const [name, [allowAddresses, message]] of Object.entries(bad)) {
      await t.rejects(
        createBroker({ upstream: { allowAddresses: allowAddresses as string[] } }),
        { code: 'BROKER_OPTIONS_INVALID', message, details: { path: /^upstream\.allowAddresses/ } },
        name,
      );
    }
    await t.rejects(
      createBroker({ upstream: { lookup: 'dns' as never } }),
      { code: 'BROKER_OPTIONS_INVALID', details: { path: 'upstream.lookup' } },
      'lookup not a function',
    );
  },
);

t.test(
  'address table: the boundaries of each range, and a refusal case for every listed range',
  async (t) => {
    const p = addressPolicy();
    const publicAddresses = [
      '8.8.8.8',
      '9.255.255.255',
      '11.0.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '126.255.255.255',
      '128.0.0.0',
      '169.253.255.255',
      '169.255.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.167.255.255',
      '192.169.0.0',
      '223.255.255.255',
      '198.20.0.0',
      '2606:4700:4700::1111',
      '2a00:1450::1',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '64:ff9b::8.8.4.4',
      '2002:808:808::1',
      'fbff::1',
      'fe7f::1',
    ];
    for (const a of publicAddresses) t.equal(p.check(a), undefined, `${a} is public`);
    const covered = new Set(Object.values(REFUSED).map(([, range]) => range));
    for (const [range] of SPECIAL_RANGES) {
      // the embedding forms are refused through the IPv4 address they embed
      if (range === '64:ff9b::/96' || range === '2002::/16') continue;
      const ok =
        covered.has(range) ||
        [
          '192.88.99.0/24',
          '198.51.100.0/24',
          '203.0.113.0/24',
          '2001:2::/48',
          '2001:10::/28',
          '2001:20::/28',
          '3fff::/20',
          '5f00::/16',
        ].includes(range);
      t.ok(ok, `${range} has a refusal case`);
    }
    for (const a of [
      '192.88.99.1',
      '198.51.100.7',
      '203.0.113.9',
      '2001:2::1',
      '2001:10::1',
      '2001:20::1',
      '3fff::1',
      '5f00::1',
    ])
      t.ok(p.check(a), `${a} is refused`);
    t.same(
      addressPolicy(['0.0.0.0/0', '::/0']).check('10.0.0.1'),
      undefined,
      'an operator may switch the rule off explicitly',
    );
    t.same(
      addressPolicy(['::ffff:10.0.0.0/104']).check('10.1.1.1'),
      undefined,
      'a range in IPv4-mapped form means those IPv4 addresses',
    );
    t.end();
  },
);
