/**
 * Vendors that ask for a client certificate, through the real broker with real curl. The
 * broker never presents one: a vendor that refuses the handshake without it is refused to
 * the child as CLI_CLIENT_CERT_UNSUPPORTED (422, audited, never retried); a vendor that only
 * asks and then answers is answered as usual; every other TLS failure keeps its own code.
 */
import { createServer as createHttps } from 'node:https';
import { createServer as createNet, type Server } from 'node:net';
import type { SecureVersion } from 'node:tls';
import t from 'tap';
import type { AuditEvent } from '../../src/broker/types.js';
import { brokerToVendor } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';
import { testPki } from '../helpers/pki.js';

const HOST = 'api.example.com';
/** the CA the broker trusts upstream */
const pki = testPki();
/** a CA the broker has never heard of */
const stranger = testPki('an unknown vendor CA');

interface VendorOpts {
  version: SecureVersion;
  /** 'required': requestCert + rejectUnauthorized; 'optional': requestCert only */
  cert?: 'required' | 'optional';
  leaf?: { key: string; cert: string };
}

function tlsVendor(o: VendorOpts): Server {
  const leaf = o.leaf ?? pki.leaf(HOST);
  return createHttps(
    {
      ...leaf,
      minVersion: o.version,
      maxVersion: o.version,
      ...(o.cert ? { requestCert: true, rejectUnauthorized: o.cert === 'required', ca: [pki.caPem] } : {}),
    },
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('vendor says hello');
    },
  );
}

/** A vendor that answers the ClientHello with one fatal alert: no CertificateRequest before it. */
function alertVendor(description: number): Server {
  return createNet((socket) => {
    socket.once('data', () => socket.end(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, description])));
    socket.on('error', () => socket.destroy());
  });
}

interface Case {
  server: () => Server;
  status: number;
  code?: string;
  /** the cause an upstream failure names (UPSTREAM_UNAVAILABLE) */
  cause?: RegExp;
}

const cases: Record<string, Case> = {
  'TLS 1.3, certificate required: refused by name': {
    server: () => tlsVendor({ version: 'TLSv1.3', cert: 'required' }),
    status: 422,
    code: 'CLI_CLIENT_CERT_UNSUPPORTED',
  },
  'TLS 1.2, certificate required: refused by name': {
    server: () => tlsVendor({ version: 'TLSv1.2', cert: 'required' }),
    status: 422,
    code: 'CLI_CLIENT_CERT_UNSUPPORTED',
  },
  'TLS 1.3, certificate optional: the vendor answers, and so does the child': {
    server: () => tlsVendor({ version: 'TLSv1.3', cert: 'optional' }),
    status: 200,
  },
  'TLS 1.2, certificate optional: the vendor answers, and so does the child': {
    server: () => tlsVendor({ version: 'TLSv1.2', cert: 'optional' }),
    status: 200,
  },
  'unknown CA: still an upstream failure': {
    server: () => tlsVendor({ version: 'TLSv1.3', leaf: stranger.leaf(HOST) }),
    status: 502,
    code: 'UPSTREAM_UNAVAILABLE',
    cause: /UNABLE_TO_VERIFY_LEAF_SIGNATURE/,
  },
  'unknown CA and a certificate required (TLS 1.3): the CA is what fails': {
    server: () => tlsVendor({ version: 'TLSv1.3', cert: 'required', leaf: stranger.leaf(HOST) }),
    status: 502,
    code: 'UPSTREAM_UNAVAILABLE',
    cause: /UNABLE_TO_VERIFY_LEAF_SIGNATURE/,
  },
  'certificate for another name: still an upstream failure': {
    server: () => tlsVendor({ version: 'TLSv1.2', leaf: pki.leaf('other.example.net') }),
    status: 502,
    code: 'UPSTREAM_UNAVAILABLE',
    cause: /ERR_TLS_CERT_ALTNAME_INVALID/,
  },
  'handshake_failure with no CertificateRequest (no shared cipher): still an upstream failure': {
    server: () => alertVendor(40),
    status: 502,
    code: 'UPSTREAM_UNAVAILABLE',
    cause: /ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE/,
  },
};

t.plan(Object.keys(cases).length);

for (const [name, c] of Object.entries(cases)) {
  t.test(name, async (t) => {
    const server = c.server();
    let connections = 0;
    server.on('connection', () => connections++);
    const { broker, events } = await brokerToVendor(t, server, pki.caPem);
    const s = broker.openSession({ egress: [HOST], tier: 'read' });
    const r = await curl(s, ['--write-out', '\n%{http_code}', `https://${HOST}/user`]);
    t.equal(r.code, 0, r.stderr);
    const nl = r.stdout.lastIndexOf('\n');
    const body = r.stdout.slice(0, nl);
    t.equal(Number(r.stdout.slice(nl + 1)), c.status, 'the status the child sees');
    t.equal(events.length, 1, 'one audit event');
    const e = events[0] as AuditEvent;
    if (c.status === 200) {
      t.equal(body, 'vendor says hello', "the vendor's answer, forwarded");
      t.match(e, { type: 'egress.allowed', status: 200, outcome: 'sent' });
      t.notOk(e.code, 'no code on a forwarded request');
      return;
    }
    const json = JSON.parse(body) as { message: string; error: { code: string; details?: unknown } };
    t.equal(json.error.code, c.code, 'the refusal body names the code');
    t.match(e, { type: 'egress.blocked', code: c.code, refusalStatus: c.status });
    if (c.cause) t.match(e.reason, c.cause, 'the cause is named as before');
    if (c.code === 'CLI_CLIENT_CERT_UNSUPPORTED') {
      t.match(json, { message: /client-certificate/i, error: { details: { host: HOST } } });
      t.equal(e.outcome, 'not_sent', 'the vendor never read the request');
      t.equal(connections, 1, 'not retried: one connection reached the vendor');
    }
  });
}
