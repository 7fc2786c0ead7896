import { request } from 'node:http';
import t from 'tap';
import type { ToolHost } from '../../src/host/types.js';
import { ownNames, startHttpServer } from '../../src/serve/http.js';
import { openSqliteStore } from '../../src/store/sqlite.js';

// The names `clibroker serve` answers to (DNS rebinding): the rule for each way of binding,
// and a real server behind a TLS proxy (serve.publicUrl) taking its public name and origin.

t.test('bound to loopback: the address, 127.0.0.1, localhost and [::1], on the bound port', async (t) => {
  const n = ownNames({ address: '127.0.0.1', port: 8787 });
  for (const h of ['127.0.0.1:8787', 'localhost:8787', 'LOCALHOST:8787', '[::1]:8787'])
    t.ok(n.host(h), `Host ${h}`);
  for (const h of [
    undefined,
    '',
    'rebind.example:8787',
    'localhost.:8787',
    '127.0.0.1:8788',
    '127.0.0.1',
    'localhost',
    '10.0.0.5:8787',
    'localhost:8787/x',
    'user@localhost:8787',
    '127.0.0.1:8787:1',
  ])
    t.notOk(n.host(h), `Host ${JSON.stringify(h)} refused`);
  t.ok(n.origin('http://localhost:8787'));
  t.ok(n.origin('http://127.0.0.1:8787'));
  for (const o of [
    'null',
    'https://localhost:8787',
    'http://localhost',
    'http://rebind.example:8787',
    'http://localhost:8787.rebind.example',
  ])
    t.notOk(n.origin(o), `Origin ${o} refused`);
  const v6 = ownNames({ address: '::1', port: 9000 });
  t.ok(v6.host('[::1]:9000'));
  t.ok(v6.host('localhost:9000'));
  t.notOk(v6.host('[::2]:9000'));
  t.ok(ownNames({ address: '127.0.0.1', port: 80 }).host('localhost'), 'no port is port 80');
});

t.test('bound to one address: that address only, and publicUrl’s name', async (t) => {
  const n = ownNames({ address: '10.0.0.5', port: 8787 }, 'https://broker.acme.example');
  t.ok(n.host('10.0.0.5:8787'));
  t.notOk(n.host('localhost:8787'), 'not loopback: localhost names another machine’s view');
  t.notOk(n.host('10.0.0.6:8787'));
  t.ok(n.host('broker.acme.example'), 'a TLS proxy passing the public Host on (port 443)');
  t.ok(n.host('broker.acme.example:443'));
  t.notOk(n.host('broker.acme.example:8443'));
  t.ok(n.origin('https://broker.acme.example'));
  t.ok(n.origin('http://10.0.0.5:8787'));
  t.notOk(n.origin('http://broker.acme.example'), 'publicUrl is https: its http origin is another');
  t.notOk(n.origin('https://broker.acme.example.rebind.example'));
});

t.test(
  'bound to every address: localhost and any IP literal on the port, never another DNS name',
  async (t) => {
    for (const address of ['0.0.0.0', '::']) {
      const n = ownNames({ address, port: 8787 });
      for (const h of ['192.168.1.20:8787', '[fe80::1]:8787', '0.0.0.0:8787', 'localhost:8787'])
        t.ok(n.host(h), `${address}: Host ${h}`);
      for (const h of ['myhost.internal:8787', '192.168.1.20:8788', 'localhost:8788'])
        t.notOk(n.host(h), `${address}: Host ${h} refused`);
      t.ok(n.origin('http://192.168.1.20:8787'));
      t.notOk(n.origin('http://myhost.internal:8787'));
    }
  },
);

t.test('a real server behind a TLS proxy: publicUrl’s Host and Origin are its own', async (t) => {
  const store = await openSqliteStore(':memory:');
  const unused = () => Promise.reject(new Error('unused'));
  const host: ToolHost = {
    tools: () => [],
    runTool: unused,
    resume: unused,
    approve: unused,
    reject: unused,
    close: async () => {},
  };
  const server = await startHttpServer(host, store, {
    port: 0,
    publicUrl: 'https://broker.acme.example',
    tokens: async () => ({ reviewers: [], executor: 'exec-token-0123456789abcdef0123456789' }),
    approvalTimeoutMs: 1000,
    mcp: { cliTier: 'read', context: 'agent-step' },
  });
  t.teardown(async () => {
    await server.close();
    await store.close();
  });
  const get = (headers: Record<string, string>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${server.url}/v1/tools`,
        { headers: { authorization: 'Bearer exec-token-0123456789abcdef0123456789', ...headers } },
        (res) => {
          let body = '';
          res.on('data', (c) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  t.equal((await get({ host: 'broker.acme.example' })).status, 200, 'the proxy passing the Host on');
  t.equal(
    (await get({ host: 'broker.acme.example', origin: 'https://broker.acme.example' })).status,
    200,
    'a page of the public origin',
  );
  t.equal(
    (await get({ origin: 'https://broker.acme.example' })).status,
    200,
    'the proxy sending its upstream',
  );
  const evil = await get({ host: 'broker.acme.example', origin: 'https://evil.example' });
  t.equal(evil.status, 403);
  t.match(JSON.parse(evil.body), { ok: false, error: { code: 'SERVE_FORBIDDEN' } });
  const misdirected = await get({ host: 'evil.example' });
  t.equal(misdirected.status, 421);
  t.match(JSON.parse(misdirected.body), { ok: false, error: { code: 'SERVE_PROTOCOL_ERROR' } });
});
