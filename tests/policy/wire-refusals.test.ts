/**
 * End to end through a real broker and a recording upstream: the classify-phase refusals
 * (TRACE/TRACK, `_method` parameters) and GraphQL detection hold on the wire. Asserted on
 * what the upstream received, on the Authorization it would have seen, and on the status and
 * code the child got.
 */
import t from 'tap';
import type { Session } from '../../src/broker/session.js';
import type { WireOverride } from '../../src/policy/types.js';
import { brokerFixture, exchange, openTunnel } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

const HOST = 'api.example.com';
const REAL = 'Bearer real-credential-wire-test-4471';
const stamper = { authorizationFor: (): string => REAL };

/** One raw request in its own tunnel; the child's answer (status line, code) and the raw text. */
async function send(
  s: Session,
  port: number,
  head: string,
  body = '',
): Promise<{ status: number; code: string | undefined; raw: string }> {
  const tls = await openTunnel(s, port, HOST);
  const raw = await exchange(tls, head + body, (o) => {
    const end = o.indexOf('\r\n\r\n');
    if (end === -1) return false;
    if (head.startsWith('HEAD ')) return true; // a HEAD answer has no body
    const len = /content-length: (\d+)/i.exec(o.slice(0, end));
    return len !== null && o.length >= end + 4 + Number(len[1]);
  });
  tls.destroy();
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
  const json = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  let code: string | undefined;
  try {
    const e = JSON.parse(json).error;
    code = e?.policyCode ?? e?.code;
  } catch {
    code = undefined;
  }
  return { status, code, raw };
}

const request = (
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body = '',
): [string, string] => {
  let head = `${method} ${target} HTTP/1.1\r\nHost: ${HOST}\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  if (body !== '') head += `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  return [`${head}\r\n`, body];
};

t.test(
  'TRACE is refused before the credential is stamped, at every tier; the upstream never sees it',
  async (t) => {
    const f = await brokerFixture(t, { hosts: [HOST], secrets: [REAL] });
    // an origin that reflects the request, as RFC 9110 has TRACE do
    f.upstream.route((req, res) => {
      const out = JSON.stringify({ method: req.method, headers: req.headers });
      res.writeHead(200, { 'content-type': 'message/http', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
    for (const tier of ['read', 'write'] as const) {
      const s = f.session({ tier, credentials: stamper });
      const r = await curl(s, ['-i', '-X', 'TRACE', `https://${HOST}/repos/acme/app`]);
      t.match(r.stdout, /^HTTP\/1\.1 405 /, `curl -X TRACE at tier ${tier}: 405`);
      t.match(r.stdout, /CLI_TRACE_REFUSED/, 'with the code');
      t.notMatch(r.stdout, /real-credential/, 'the credential is not reflected');
      const raw = await send(s, f.broker.port, ...request('TRACE', '/', { 'Max-Forwards': '0' }));
      t.same([raw.status, raw.code], [405, 'CLI_TRACE_REFUSED'], `raw TRACE at tier ${tier}`);
      // TRACK and lower-case spellings: refused, by classify or by the HTTP parser, never forwarded
      for (const m of ['TRACK', 'trace']) {
        const x = await send(s, f.broker.port, ...request(m, '/'));
        t.ok(
          x.status === 405 || x.status === 400 || x.status === 0,
          `${m} at tier ${tier} is refused (${x.status})`,
        );
        t.notMatch(x.raw, /real-credential/);
      }
    }
    t.equal(f.upstream.received.length, 0, 'the upstream received nothing');
    // a control: the same session stamps and forwards a GET
    const s = f.session({ tier: 'write', credentials: stamper });
    const ok = await curl(s, ['-i', `https://${HOST}/repos/acme/app`]);
    t.match(ok.stdout, /^HTTP\/1\.1 200 /);
    t.equal(f.upstream.received.length, 1);
    t.equal(
      f.upstream.received[0]!.headers.authorization,
      REAL,
      'the stamper is wired: a GET gets the credential',
    );
    const blocked = f.events.filter((e) => e.type === 'egress.blocked');
    t.ok(
      blocked.some((e) => e.code === 'CLI_TRACE_REFUSED' && e.decision === 'deny'),
      'TRACE refusals are audited',
    );
    // one event per refused TRACE, each saying what happened: never sent, the broker's own 405, a class
    for (const e of blocked.filter((x) => x.code === 'CLI_TRACE_REFUSED'))
      t.match(
        e,
        { outcome: 'not_sent', refusalStatus: 405, class: 'write' },
        'a TRACE event names its outcome and class',
      );
    t.ok(
      blocked.every((e) => e.status === undefined),
      'a refused TRACE has no vendor status',
    );
  },
);

t.test('a _method override in the query string or a form body is refused on the wire', async (t) => {
  const f = await brokerFixture(t, { hosts: [HOST], secrets: [REAL] });
  const loosen: WireOverride[] = [{ match: { method: 'POST', pathPattern: '/search' }, wireClass: 'read' }];
  const s = f.session({ tier: 'write', credentials: stamper, overrides: loosen });
  const cases: [string, string, Record<string, string>, string][] = [
    ['POST', '/search?_method=DELETE', {}, ''],
    ['POST', '/search?a=1;_METHOD=DELETE', {}, ''],
    ['GET', '/repos/a/b?%5Fmethod=DELETE', {}, ''],
    ['POST', '/search', { 'Content-Type': 'application/x-www-form-urlencoded' }, 'q=x&_method=DELETE'],
    [
      'POST',
      '/search',
      { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
      '_%6Dethod=DELETE',
    ],
    ['POST', '/repos/a/b', {}, '.method=DELETE'], // no content type: Rack parses it as a form
    [
      'PUT',
      '/repos/a/b',
      { 'Content-Type': 'application/x-www-form-urlencoded', 'Transfer-Encoding': 'chunked' },
      '',
    ],
  ];
  for (const [method, target, headers, body] of cases) {
    const [head, b] = request(method, target, headers, body);
    const chunked = headers['Transfer-Encoding'] === 'chunked';
    const r = await send(s, f.broker.port, head, chunked ? '10\r\n_method=DELETE&x\r\n0\r\n\r\n' : b);
    t.same(
      [r.status, r.code],
      [422, 'CLI_METHOD_OVERRIDE_REFUSED'],
      `${method} ${target} ${body || (chunked ? 'chunked form' : '')}`,
    );
  }
  t.equal(f.upstream.received.length, 0, 'nothing reached the upstream');
  // real curl: -d sends an urlencoded body
  const r = await curl(s, ['-i', '-d', 'title=x&_method=DELETE', `https://${HOST}/search`]);
  t.match(r.stdout, /^HTTP\/1\.1 422 /);
  t.match(r.stdout, /CLI_METHOD_OVERRIDE_REFUSED/);
  // a form body without _method is read whole and forwarded unchanged
  const ok = await curl(s, ['-d', 'title=x&method=1', `https://${HOST}/search`]);
  t.same(JSON.parse(ok.stdout), { method: 'POST', url: '/search', bytes: 16 });
  t.equal(f.upstream.received.length, 1);
  t.equal(f.upstream.received[0]!.body.toString(), 'title=x&method=1');
  const refused = f.events.filter((e) => e.code === 'CLI_METHOD_OVERRIDE_REFUSED');
  t.ok(refused.length > 0, 'audited');
  for (const e of refused) {
    t.match(
      e,
      { type: 'egress.blocked', outcome: 'not_sent', refusalStatus: 422 },
      'a _method refusal was never sent',
    );
    t.ok(
      e.class === (e.method === 'GET' ? 'read' : 'write'),
      `${e.method} keeps the class its method implies (${e.class})`,
    );
  }
});

t.test(
  'at tier write, deleteRepository through any GraphQL spelling needs approval; never sent',
  async (t) => {
    const f = await brokerFixture(t, { hosts: [HOST], secrets: [REAL] });
    const overrides: WireOverride[] = [
      { match: { pathPattern: '/graphql', graphqlOperation: 'deleteRepository' }, wireClass: 'destructive' },
    ];
    const s = f.session({ tier: 'write', credentials: stamper, overrides });
    const doc = JSON.stringify({
      query: 'mutation M { deleteRepository(input: {repositoryId: "R_1"}) { clientMutationId } }',
      operationName: 'M',
    });
    const JSON_CT = { 'Content-Type': 'application/json' };
    const spellings: [string, string][] = [
      ['POST', '/graphql'],
      ['POST', '/graphql/'],
      ['POST', '/GraphQL'],
      ['POST', '/graphql;x'],
      ['POST', '/graphq%6c'],
      ['POST', '/graphql.json'],
      ['POST', '/x/../graphql'],
      ['GET', '/graphql'],
      ['HEAD', '/GraphQL/'],
      ['PUT', '/graphql'],
    ];
    for (const [method, target] of spellings) {
      const r = await send(s, f.broker.port, ...request(method, target, JSON_CT, doc));
      if (method === 'HEAD') t.equal(r.status, 422, `${method} ${target} (no body to carry the code)`);
      else t.same([r.status, r.code], [422, 'CLI_CONFIRMATION_REQUIRED'], `${method} ${target}`);
    }
    const viaUrl = await send(
      s,
      f.broker.port,
      ...request(
        'GET',
        `/GraphQL/?query=${encodeURIComponent('mutation { deleteRepository(input: {}) { x } }')}`,
      ),
    );
    t.same([viaUrl.status, viaUrl.code], [422, 'CLI_CONFIRMATION_REQUIRED'], 'GET /GraphQL/?query=');
    // GET with a body that cannot be read: unparsed, so the override's unknown root fields match
    const unreadable = await send(
      s,
      f.broker.port,
      ...request('GET', '/graphql', { 'Content-Type': 'text/plain' }, 'mutation { deleteRepository }'),
    );
    t.same(
      [unreadable.status, unreadable.code],
      [422, 'CLI_CONFIRMATION_REQUIRED'],
      'GET /graphql with an unreadable body',
    );
    // documents servers' lexers cut differently are unparsed, so the override's unknown root fields match
    const ambiguous: [string, string][] = [
      [
        'U+2028 ends a comment (older graphql-java)',
        'query Q { viewer { login } } # note\u2028mutation M { deleteRepository(input: {}) { x } }',
      ],
      [
        'a lone CR does not (graphql-ruby)',
        'query Q { a # \r (x: """ \n } mutation M { deleteRepository } \n # """) }',
      ],
      [
        'a raw LF ends a string (Hot Chocolate)',
        'query Q { a(s: "x\n) } mutation M { deleteRepository } #") }',
      ],
    ];
    for (const [name, query] of ambiguous) {
      const r = await send(
        s,
        f.broker.port,
        ...request('POST', '/graphql', JSON_CT, JSON.stringify({ query, operationName: 'M' })),
      );
      t.same([r.status, r.code], [422, 'CLI_CONFIRMATION_REQUIRED'], `ambiguous document: ${name}`);
    }
    t.equal(f.upstream.received.length, 0, 'nothing reached the upstream');
    // a query through a variant spelling is a read and is forwarded with its body
    const query = JSON.stringify({ query: '{ viewer { login } }' });
    const read = f.session({ credentials: stamper, overrides });
    const ok = await send(read, f.broker.port, ...request('GET', '/GraphQL/', JSON_CT, query));
    t.equal(ok.status, 200, 'a GET query body at tier read is a read');
    t.equal(f.upstream.received.length, 1);
    t.equal(f.upstream.received[0]!.body.toString(), query, 'the body that was read is forwarded as sent');
    const write = await send(
      read,
      f.broker.port,
      ...request('GET', '/graphql', JSON_CT, JSON.stringify({ query: 'mutation { addStar }' })),
    );
    t.same(
      [write.status, write.code],
      [422, 'CLI_REQUEST_TIER_DENIED'],
      'a GET mutation body at tier read is denied',
    );
  },
);

t.test(
  'an override that names a root field at a path makes the broker read that endpoint body, as it does at /graphql',
  async (t) => {
    const f = await brokerFixture(t, { hosts: [HOST], secrets: [REAL] });
    // a GraphQL endpoint with no `graphql` segment (monday.com serves it at /v2)
    const overrides: WireOverride[] = [
      { match: { pathPattern: '/v2', graphqlOperation: 'delete_board' }, wireClass: 'destructive' },
    ];
    const JSON_CT = { 'Content-Type': 'application/json' };
    const write = f.session({ tier: 'write', credentials: stamper, overrides });
    const del = await send(
      write,
      f.broker.port,
      ...request(
        'POST',
        '/v2',
        JSON_CT,
        JSON.stringify({ query: 'mutation { delete_board(board_id: 1) { id } }' }),
      ),
    );
    t.same(
      [del.status, del.code],
      [422, 'CLI_CONFIRMATION_REQUIRED'],
      'the destructive root field needs approval',
    );
    t.equal(f.upstream.received.length, 0, 'never sent');
    // the body was read, so a query there is a read: it passes at tier read (unread, it would be unparsed and refused)
    const read = f.session({ credentials: stamper, overrides });
    const query = JSON.stringify({ query: '{ boards { id } }' });
    const ok = await send(read, f.broker.port, ...request('POST', '/v2', JSON_CT, query));
    t.equal(ok.status, 200, 'a query at the declared endpoint is a read');
    t.equal(f.upstream.received[0]?.body.toString(), query, 'forwarded as sent');
  },
);
