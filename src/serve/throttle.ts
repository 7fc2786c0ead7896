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
 * At most 10,000 addresses are remembered (the oldest is forgotten first): one who cycles more
 * addresses than that has long met the overall bound. The address is the TCP peer's; behind a
 * reverse proxy every client shares the proxy's, and the per-address bound acts on them all.
 */
import type { IncomingMessage } from 'node:http';
import { brokerError } from '../errors.js';

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
  now: () => Date.now(),
};

export type Scope = 'address' | 'overall';

interface Counter {
  windowStart: number;
  failures: number;
  last: number;
  lockedUntil: number;
  /** lock-outs in a row */
  strikes: number;
}

const fresh = (t: number): Counter => ({ windowStart: t, failures: 0, last: t, lockedUntil: 0, strikes: 0 });

/** A lock-out just begun. */
export interface LockOut {
  scope: Scope;
  seconds: number;
}

export class Throttle {
  readonly #limits: ThrottleLimits;
  readonly #addresses = new Map<string, Counter>();
  readonly #all: Counter;

  constructor(limits: ThrottleLimits = THROTTLE_LIMITS) {
    this.#limits = { ...limits };
    this.#all = fresh(this.#limits.now());
  }

  /** How long `address` must still wait, and why; undefined when it may try. */
  wait(address: string): { scope: Scope; ms: number } | undefined {
    const t = this.#limits.now();
    const a = this.#addresses.get(address);
    const own = a && a.lockedUntil > t ? a.lockedUntil - t : 0;
    const all = this.#all.lockedUntil > t ? this.#all.lockedUntil - t : 0;
    if (own === 0 && all === 0) return undefined;
    return own >= all ? { scope: 'address', ms: own } : { scope: 'overall', ms: all };
  }

  /** One wrong token from `address`; the lock-outs it starts (none, or one per scope). */
  failure(address: string): LockOut[] {
    const t = this.#limits.now();
    let a = this.#addresses.get(address);
    if (!a) {
      if (this.#addresses.size >= this.#limits.maxAddresses) {
        const oldest = this.#addresses.keys().next().value;
        if (oldest !== undefined) this.#addresses.delete(oldest);
      }
      a = fresh(t);
      this.#addresses.set(address, a);
    }
    const out: LockOut[] = [];
    const own = this.#count(a, this.#limits.perAddress, t);
    if (own) out.push({ scope: 'address', seconds: own });
    const all = this.#count(this.#all, this.#limits.overall, t);
    if (all) out.push({ scope: 'overall', seconds: all });
    return out;
  }

  /** Counts a failure; the seconds of the lock-out it starts, or 0. */
  #count(c: Counter, limit: number, t: number): number {
    const { windowMs, lockMs, maxLockMs } = this.#limits;
    if (t - Math.max(c.last, c.lockedUntil) >= windowMs) Object.assign(c, fresh(t));
    else if (t - c.windowStart >= windowMs) Object.assign(c, { windowStart: t, failures: 0 });
    c.last = t;
    c.failures++;
    if (c.strikes === 0 && c.failures < limit) return 0;
    const ms = Math.min(lockMs * 2 ** c.strikes, maxLockMs);
    Object.assign(c, { strikes: c.strikes + 1, lockedUntil: t + ms, failures: 0, windowStart: t });
    return Math.ceil(ms / 1000);
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
export function admit(throttle: Throttle, req: IncomingMessage, line?: Record<string, unknown>): void {
  const w = throttle.wait(clientAddress(req));
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
export function failed(throttle: Throttle, req: IncomingMessage, line?: Record<string, unknown>): LockOut[] {
  const locks = throttle.failure(clientAddress(req));
  if (line && locks.length > 0) {
    line['address'] = clientAddress(req);
    line['lockedOut'] = locks;
  }
  return locks;
}
