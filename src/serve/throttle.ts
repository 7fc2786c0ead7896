/**
 * What slows guessing at serve's doors: wrong bearer tokens (the Platform API, /mcp) and wrong
 * reviewer sign-ins (POST /review/login) are counted per client address and over all addresses.
 *
 *   10 failures from one address within 60 s    → that address is locked out for 60 s
 *   100 failures from all addresses within 60 s  → every address is locked out for 60 s
 *   a failure after a lock-out, before a quiet
 *   minute has passed                            → locked again, twice as long (at most 15 min)
 *
 * While locked out, a request is answered 429 SERVE_RATE_LIMITED with Retry-After (seconds)
 * before its token is looked at: the right token is refused too, so no answer tells a guess
 * apart. A success neither counts nor forgives (an agent holding one token cannot reset its
 * count between guesses at another); a quiet window after the last failure or lock-out does.
 * The counts live in the store every replica of the server shares, so a guesser spread over
 * replicas behind a load balancer meets the same bounds; a counter quiet for a whole window is
 * forgotten. (Without a store, in one process, at most 10,000 addresses are remembered, the
 * oldest forgotten first: one who cycles more addresses than that has long met the overall
 * bound.) The address is the TCP peer's; behind a
 * reverse proxy every client shares the proxy's, and the per-address bound acts on them all.
 */
import type { IncomingMessage } from 'node:http';
import { brokerError } from '../errors.js';
import type { Store, ThrottleCounter } from '../store/types.js';

export interface ThrottleLimits {
  /** failures from one address within `windowMs` that lock it out */
  perAddress: number;
  /** failures from all addresses together within `windowMs` that lock every address out */
  overall: number;
  windowMs: number;
  /** the first lock-out; each further one in a row is twice as long */
  lockMs: number;
  maxLockMs: number;
  /** addresses remembered at once */
  maxAddresses: number;
  /**
   * With a store: how long an address's read counters answer its next checks before the store
   * is read again (default 1000). A failure on this server drops them at once.
   */
  readCacheMs?: number;
  now: () => number;
}

/** The limits each server's throttle starts with (tests set smaller ones, and a clock, before starting one). */
export const THROTTLE_LIMITS: ThrottleLimits = {
  perAddress: 10,
  overall: 100,
  windowMs: 60_000,
  lockMs: 60_000,
  maxLockMs: 15 * 60_000,
  maxAddresses: 10_000,
  readCacheMs: 1000,
  now: () => Date.now(),
};

export type Scope = 'address' | 'overall';

/** A lock-out just begun. */
export interface LockOut {
  scope: Scope;
  seconds: number;
}

/** The counter a key starts with, or starts again with after a quiet window. */
const fresh = (t: number): ThrottleCounter => ({
  windowStart: t,
  failures: 0,
  last: t,
  lockedUntil: 0,
  strikes: 0,
});

/** The key of the count over all addresses; an address's key is `a:<address>`. */
const ALL = '*';
const keyOf = (address: string): string => `a:${address}`;

/**
 * One failure counted on `c` (a copy is returned): the counter after it, and the seconds of
 * the lock-out it starts, or 0.
 */
function count(
  c: ThrottleCounter,
  limit: number,
  t: number,
  limits: ThrottleLimits,
): { counter: ThrottleCounter; seconds: number } {
  const { windowMs, lockMs, maxLockMs } = limits;
  let n = { ...c };
  if (t - Math.max(n.last, n.lockedUntil) >= windowMs) n = fresh(t);
  else if (t - n.windowStart >= windowMs) n = { ...n, windowStart: t, failures: 0 };
  n.last = t;
  n.failures++;
  if (n.strikes === 0 && n.failures < limit) return { counter: n, seconds: 0 };
  const ms = Math.min(lockMs * 2 ** n.strikes, maxLockMs);
  n = { ...n, strikes: n.strikes + 1, lockedUntil: t + ms, failures: 0, windowStart: t };
  return { counter: n, seconds: Math.ceil(ms / 1000) };
}

/**
 * The counters. Given a store, they live in it, so every server over that store counts the
 * same failures and honours the same lock-outs (a guesser spread over replicas behind a load
 * balancer meets one bound); each failure is one transaction, and a check reads two rows —
 * at most once a second per address: what a read found answers that address's checks for
 * `readCacheMs`, and concurrent checks share one read. So a busy client with a good token
 * costs the store one read a second, not one a request, and a flood from one address the
 * same. A failure on this server drops the address's read, so its next check sees the count
 * it just wrote; a lock-out another replica starts is honoured here within `readCacheMs`,
 * and every guess in between is still counted. Without a store, they live in this process.
 */
export class Throttle {
  readonly #limits: ThrottleLimits;
  readonly #store: Pick<Store, 'throttleCounters' | 'updateThrottle'> | undefined;
  readonly #memory = new Map<string, ThrottleCounter>();
  /** with a store: each address's last read, by key, oldest first (at most maxAddresses) */
  readonly #reads = new Map<string, { at: number; counters: Promise<Map<string, ThrottleCounter>> }>();

  constructor(
    limits: ThrottleLimits = THROTTLE_LIMITS,
    store?: Pick<Store, 'throttleCounters' | 'updateThrottle'>,
  ) {
    this.#limits = { ...limits };
    this.#store = store;
  }

  /** How long `address` must still wait, and why; undefined when it may try. */
  async wait(address: string): Promise<{ scope: Scope; ms: number } | undefined> {
    const t = this.#limits.now();
    const keys = [keyOf(address), ALL];
    const got = this.#store ? await this.#read(this.#store, keys[0]!, t) : this.#memory;
    const a = got.get(keys[0]!);
    const all = got.get(ALL);
    const own = a && a.lockedUntil > t ? a.lockedUntil - t : 0;
    const every = all && all.lockedUntil > t ? all.lockedUntil - t : 0;
    if (own === 0 && every === 0) return undefined;
    return own >= every ? { scope: 'address', ms: own } : { scope: 'overall', ms: every };
  }

  /** The counters of `key` and of all addresses: a read less than readCacheMs old, or a new one. */
  #read(
    store: Pick<Store, 'throttleCounters'>,
    key: string,
    t: number,
  ): Promise<Map<string, ThrottleCounter>> {
    const kept = this.#reads.get(key);
    if (kept && t - kept.at < (this.#limits.readCacheMs ?? 0)) return kept.counters;
    const counters = store.throttleCounters([key, ALL]);
    this.#reads.delete(key);
    this.#reads.set(key, { at: t, counters });
    if (this.#reads.size > this.#limits.maxAddresses) {
      const oldest = this.#reads.keys().next().value;
      if (oldest !== undefined) this.#reads.delete(oldest);
    }
    // a failed read answers only the checks that shared it
    counters.catch(() => {
      if (this.#reads.get(key)?.counters === counters) this.#reads.delete(key);
    });
    return counters;
  }

  /** One wrong token from `address`; the lock-outs it starts (none, or one per scope). */
  async failure(address: string): Promise<LockOut[]> {
    const t = this.#limits.now();
    const key = keyOf(address);
    const out: LockOut[] = [];
    const apply = (current: Map<string, ThrottleCounter>): Map<string, ThrottleCounter> => {
      out.length = 0;
      const own = count(current.get(key) ?? fresh(t), this.#limits.perAddress, t, this.#limits);
      if (own.seconds) out.push({ scope: 'address', seconds: own.seconds });
      const all = count(current.get(ALL) ?? fresh(t), this.#limits.overall, t, this.#limits);
      if (all.seconds) out.push({ scope: 'overall', seconds: all.seconds });
      return new Map([
        [key, own.counter],
        [ALL, all.counter],
      ]);
    };
    if (this.#store) {
      // this address's read is dropped before the write and again after it: a check made
      // while the write ran may have read the counts from before it
      this.#reads.delete(key);
      // a counter quiet for a whole window would start afresh: it is forgotten
      await this.#store.updateThrottle([key, ALL], apply, t - this.#limits.windowMs);
      this.#reads.delete(key);
      return out;
    }
    if (!this.#memory.has(key) && this.#memory.size >= this.#limits.maxAddresses + 1) {
      const oldest = [...this.#memory.keys()].find((k) => k !== ALL);
      if (oldest !== undefined) this.#memory.delete(oldest);
    }
    for (const [k, v] of apply(this.#memory)) this.#memory.set(k, v);
    return out;
  }
}

/** The address as counted (an IPv4 address mapped into IPv6 counts as itself). */
export function clientAddress(req: IncomingMessage): string {
  const a = req.socket?.remoteAddress ?? 'unknown';
  return a.startsWith('::ffff:') ? a.slice(7) : a;
}

/**
 * Refuse a locked-out client before its token is checked.
 * @throws BrokerError SERVE_RATE_LIMITED (429; details.retryAfterSeconds, which the answer
 *   also sends as Retry-After)
 */
export async function admit(
  throttle: Throttle,
  req: IncomingMessage,
  line?: Record<string, unknown>,
): Promise<void> {
  const w = await throttle.wait(clientAddress(req));
  if (!w) return;
  const seconds = Math.max(1, Math.ceil(w.ms / 1000));
  if (line) {
    line['address'] = clientAddress(req);
    line['limited'] = w.scope;
  }
  throw brokerError(
    'SERVE_RATE_LIMITED',
    { scope: w.scope, seconds },
    { details: { scope: w.scope, retryAfterSeconds: seconds } },
  );
}

/** A wrong token from this request's client; a lock-out it starts is written on `line`. */
export async function failed(
  throttle: Throttle,
  req: IncomingMessage,
  line?: Record<string, unknown>,
): Promise<LockOut[]> {
  const locks = await throttle.failure(clientAddress(req));
  if (line && locks.length > 0) {
    line['address'] = clientAddress(req);
    line['lockedOut'] = locks;
  }
  return locks;
}
