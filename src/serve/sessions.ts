/**
 * The review page's sessions: one per sign-in, held by the server process that issued it.
 *
 * A sign-in draws a random id (32 bytes) and records who signed in and when. The cookie is
 * `<id>.<mac>`, the mac an HMAC of the reviewer's name and the id keyed by the reviewer's
 * token: the token never sits in the browser, and once the token is rotated the mac no longer
 * matches, so every session made with the old token ends. On every request the session must
 * still be in the table, its mac must match the reviewer's current token, it must be younger
 * than `maxMs` and it must have been used within `idleMs`; else it is ended and the request
 * is signed in as nobody. Sign-out removes it from the table, so the cookie is worth nothing
 * afterwards even if it was kept.
 *
 * The table is bounded: at most `perReviewer` sessions of one reviewer and `overall` in all,
 * the oldest ended first. It lives in memory: a restart ends every session, and a second
 * server process does not know the first one's.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ServeTokens } from '../config/types.js';
import { type Caller, rolesOf } from './auth.js';

export interface ReviewSessionLimits {
  /** a session not used for this long is ended */
  idleMs: number;
  /** a session is ended this long after sign-in, however busy (also the cookie's Max-Age) */
  maxMs: number;
  /** sessions of one reviewer at once (a further sign-in ends their oldest) */
  perReviewer: number;
  /** sessions of all reviewers at once (a further sign-in ends the oldest) */
  overall: number;
  now: () => number;
}

/** The limits each server's table starts with (tests set a clock of their own). */
export const REVIEW_SESSION_LIMITS: ReviewSessionLimits = {
  idleMs: 30 * 60_000,
  maxMs: 12 * 60 * 60_000,
  perReviewer: 16,
  overall: 1024,
  now: () => Date.now(),
};

/** The cookie that carries a review session. */
export const REVIEW_COOKIE = 'clibroker_review';

interface Session {
  who: string;
  issuedAt: number;
  lastSeen: number;
}

const mac = (who: string, id: string, token: string): string =>
  createHmac('sha256', token).update(`clibroker-review-session:${who}:${id}`).digest('base64url');

/** The cookie's value in a Cookie header, or undefined. */
function cookieValue(header: string | undefined): string | undefined {
  return new RegExp(`(?:^|;\\s*)${REVIEW_COOKIE}=([^;]+)`).exec(header ?? '')?.[1];
}

export class ReviewSessions {
  readonly #limits: ReviewSessionLimits;
  /** by id, in the order they were issued (a Map keeps insertion order): the oldest first */
  readonly #table = new Map<string, Session>();

  constructor(limits: Partial<ReviewSessionLimits> = {}) {
    this.#limits = { ...REVIEW_SESSION_LIMITS, ...limits };
  }

  /** The cookie's Max-Age, in seconds: the absolute lifetime. */
  get maxAgeSeconds(): number {
    return Math.floor(this.#limits.maxMs / 1000);
  }

  /** Sessions held now (expired ones may still count until the next sign-in sweeps them). */
  get size(): number {
    return this.#table.size;
  }

  /** A new session for a reviewer who just signed in with `token`: the cookie's value. */
  issue(who: string, token: string): string {
    const now = this.#limits.now();
    for (const [id, s] of this.#table) if (this.#expired(s, now)) this.#table.delete(id);
    const mine = [...this.#table].filter(([, s]) => s.who === who);
    for (const [id] of mine.slice(0, Math.max(0, mine.length - this.#limits.perReviewer + 1)))
      this.#table.delete(id);
    for (const [id] of this.#table) {
      if (this.#table.size < this.#limits.overall) break;
      this.#table.delete(id);
    }
    const id = randomBytes(32).toString('base64url');
    this.#table.set(id, { who, issuedAt: now, lastSeen: now });
    return `${id}.${mac(who, id, token)}`;
  }

  /**
   * The reviewer a request's Cookie header signs in, or undefined; a session found expired
   * or made with a token since rotated is ended. `touch` (the default) counts the request as
   * the reviewer's activity; the page's background refresh passes false, so an open tab
   * alone does not keep a session alive.
   */
  caller(cookie: string | undefined, tokens: ServeTokens, touch = true): Caller | undefined {
    const found = this.#find(cookie, tokens);
    if (!found) return undefined;
    if (touch) found.session.lastSeen = this.#limits.now();
    return { role: 'reviewer', who: found.session.who };
  }

  /** Sign-out: the request's session (if it is a live one) is ended for good. */
  end(cookie: string | undefined, tokens: ServeTokens): void {
    const found = this.#find(cookie, tokens);
    if (found) this.#table.delete(found.id);
  }

  #expired(s: Session, now: number): boolean {
    return now - s.issuedAt >= this.#limits.maxMs || now - s.lastSeen >= this.#limits.idleMs;
  }

  #find(cookie: string | undefined, tokens: ServeTokens): { id: string; session: Session } | undefined {
    const m = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/.exec(cookieValue(cookie) ?? '');
    if (!m) return undefined;
    const [, id, got] = m as unknown as [string, string, string];
    const session = this.#table.get(id);
    if (!session) return undefined;
    const token = tokens.reviewers.find(([w]) => w === session.who)?.[1];
    const want = Buffer.from(token ? mac(session.who, id, token) : '');
    const ok =
      token !== undefined &&
      // a reviewer token that is also another role's (or another reviewer's) opens no session
      rolesOf(token, tokens).length === 1 &&
      want.length === got.length &&
      timingSafeEqual(want, Buffer.from(got));
    // a rotated token, a reviewer removed from the configuration, or past a lifetime: ended
    if (!ok || this.#expired(session, this.#limits.now())) {
      this.#table.delete(id);
      return undefined;
    }
    return { id, session };
  }
}
