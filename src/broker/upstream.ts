/**
 * The upstream side: one undici Agent (keep-alive pools per origin) shared by every session.
 * Credentials are stamped per request, never per connection, so sharing is safe (DESIGN §1).
 * TLS is verified against the system store or `upstream.ca`; `upstream.resolve` maps a host
 * to a loopback port for tests and mock vendors while SNI and Host stay the real host.
 */
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { BrokerOptions } from './types.js';

export function createUpstream(opts: BrokerOptions['upstream'] = {}): Agent {
  const ca = opts.ca === undefined ? undefined : typeof opts.ca === 'string' ? [opts.ca] : [...opts.ca];
  const base = buildConnector({
    ...(ca ? { ca } : {}),
    rejectUnauthorized: true,
    ALPNProtocols: ['http/1.1'],
    // Interactive CLI traffic: small requests, latency matters more than batching.
    noDelay: true,
  } as buildConnector.BuildOptions);
  const resolve = opts.resolve;
  const connect: buildConnector.connector = resolve
    ? (o, cb) => {
        const to = resolve(o.hostname);
        // servername stays the real host: the vendor's certificate is checked against it.
        return base(to ? { ...o, hostname: to.host, port: String(to.port), servername: o.hostname } : o, cb);
      }
    : base;
  return new Agent({
    connect,
    connections: opts.connections ?? 32,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    headersTimeout: 270_000,
    bodyTimeout: 270_000,
  });
}

export type { Dispatcher };
