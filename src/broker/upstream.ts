/**
 * Upstream routing, and the undici Agent a broker lends its host. The broker's own requests
 * go through its own client (pool.ts); both use the routing here. TLS is verified against the
 * system store or `upstream.ca`; `upstream.resolve` maps a host to a loopback port for tests
 * and mock vendors while SNI and Host stay the real host.
 *
 * The route looks the name up itself, checks every address of the answer against the
 * address rule (src/broker/address.ts), and hands exactly that answer to the socket as its
 * lookup: the address checked is the address connected to, with no second lookup in between
 * for a rebinding DNS server to answer differently. node's own connection racing over the
 * addresses (happy eyeballs) still applies, and SNI and the certificate check stay on the
 * real name.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import type { Agent, buildConnector, Dispatcher } from 'undici';
import { type BrokerError, policyError } from '../errors.js';
import { type AddressHit, addressPolicy } from './address.js';
import type { BrokerOptions, UpstreamLookup } from './types.js';
import { undici } from './undici.js';

/** As the connect timeout: a lookup that takes longer fails the same way. */
const LOOKUP_TIMEOUT_MS = 10_000;
/** The code of a lookup (or, in pool.ts, a connect) that timed out: one code for both. */
export const CONNECT_TIMEOUT_CODE = 'ERR_UPSTREAM_CONNECT_TIMEOUT';

const systemLookup: UpstreamLookup = (host) => dnsLookup(host, { all: true });

/** Where a connection to a host goes: the name or address to dial, its checked addresses, the port when `resolve` moves it. */
export type Route = (
  host: string,
) => Promise<{ name: string; addresses: { address: string; family: number }[]; port?: string }>;

/**
 * The routing both upstream clients share: `upstream.resolve`, then the lookup (bounded by
 * {@link LOOKUP_TIMEOUT_MS}), then the address rule on every address of the answer — a mixed
 * answer is refused whole.
 * @throws TypeError when `allowAddresses` holds an entry that is not an address range, or
 *   `lookup` is not a function
 */
export function createRoute(opts: BrokerOptions['upstream'] = {}): Route {
  const policy = addressPolicy(opts.allowAddresses ?? []);
  if (opts.lookup !== undefined && typeof opts.lookup !== 'function')
    throw new TypeError('upstream.lookup must be a function (host) => Promise<{ address, family }[]>');
  const lookup = opts.lookup ?? systemLookup;
  const resolve = opts.resolve;
  return async (host) => {
    const to = resolve?.(host);
    const name = to ? to.host : host;
    const answer = isIP(name) ? [name] : (await withTimeout(lookup(name), host)).map((a) => a.address);
    if (answer.length === 0 || !answer.every((a) => typeof a === 'string' && isIP(a) !== 0)) {
      throw Object.assign(new Error(`the lookup of ${host} gave no usable address`), { code: 'ENOTFOUND' });
    }
    for (const address of answer) {
      const hit = policy.check(address);
      if (hit) throw addressDenied(host, hit);
    }
    const addresses = answer.map((address) => ({ address, family: isIP(address) }));
    return to ? { name, addresses, port: String(to.port) } : { name, addresses };
  };
}

/**
 * An undici Agent over the same routing, for requests a broker's host sends the way the
 * broker does (token minting); the broker's own requests go through pool.ts.
 * @throws TypeError as {@link createRoute}
 */
export function createUpstream(opts: BrokerOptions['upstream'] = {}): Agent {
  const ca = opts.ca === undefined ? undefined : typeof opts.ca === 'string' ? [opts.ca] : [...opts.ca];
  // The checked answer for the connect being started. net.connect calls its lookup
  // synchronously inside connect(), so the answer is set just before and always cleared
  // after; a lookup that found none (were node ever to call it later) fails the connect
  // rather than fall back to DNS.
  let checked: readonly { address: string; family: number }[] | undefined;
  const handOver: LookupFunction = (host, options, callback) => {
    const answer = checked;
    checked = undefined;
    if (!answer)
      return callback(Object.assign(new Error(`no checked address for ${host}`), { code: 'ENOTFOUND' }), '');
    if (options.all) return callback(null, [...answer]);
    callback(null, answer[0]!.address, answer[0]!.family);
  };
  const route = createRoute(opts);
  const { Agent, buildConnector } = undici();
  const base = buildConnector({
    ...(ca ? { ca } : {}),
    rejectUnauthorized: true,
    ALPNProtocols: ['http/1.1'],
    // Interactive CLI traffic: small requests, latency matters more than batching.
    noDelay: true,
    lookup: handOver,
    autoSelectFamily: true,
  } as buildConnector.BuildOptions);

  const connect: buildConnector.connector = (o, cb) => {
    // servername stays the real host: the vendor's certificate is checked against it.
    const servername = o.servername || (isIP(o.hostname) ? undefined : o.hostname);
    route(o.hostname).then(
      ({ name, addresses, port }) => {
        checked = isIP(name) ? undefined : addresses;
        try {
          base(
            { ...o, hostname: name, ...(port ? { port } : {}), ...(servername ? { servername } : {}) },
            cb,
          );
        } finally {
          checked = undefined;
        }
      },
      (err: Error) => cb(err, null),
    );
  };
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

function withTimeout<T>(p: Promise<T>, host: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          Object.assign(new Error(`looking up ${host} took longer than ${LOOKUP_TIMEOUT_MS} ms`), {
            code: CONNECT_TIMEOUT_CODE,
          }),
        ),
      LOOKUP_TIMEOUT_MS,
    );
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A policy refusal like a host outside egress: POLICY_BLOCKED with its own policyCode. It
 * names the range and its kind, not the address itself (the child need not learn it).
 */
function addressDenied(host: string, hit: AddressHit): BrokerError {
  return policyError(
    'CLI_EGRESS_ADDRESS_DENIED',
    { host, kind: hit.kind, range: hit.range },
    { details: { host, range: hit.range } },
  );
}

export type { Dispatcher };
