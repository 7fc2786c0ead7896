/**
 * The review page's sessions: one per sign-in, kept in the store, so every replica of the
 * server over that store knows them and a sign-out on one ends the session on all.
 *
 * A sign-in draws a random id (32 bytes) and records who signed in and when. The cookie is
 * `<id>.<mac>`, the mac an HMAC of the reviewer's name and the id keyed by the reviewer's
 * token: the token never sits in the browser, and once the token is rotated the mac no longer
 * matches, so every session made with the old token ends. The store holds a hash of the id,
 * never the id: one who can read the store cannot make a cookie from it. On every request the
 * session must still be in the store, its mac must match the reviewer's current token, it
 * must be younger than `maxMs` and it must have been used within `idleMs`; else it is ended
 * and the request is signed in as nobody. Sign-out removes it, so the cookie is worth nothing
 * afterwards even if it was kept.
 *
 * The table is bounded: at most `perReviewer` sessions of one reviewer and `overall` in all,
 * the oldest ended first (applied by the store in the sign-in's own transaction, so replicas
 * signing in at once still keep the bound). A restart of a replica ends nothing.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ServeTokens } from '../config/types.js';
import type { ReviewSessionRecord, Store } from '../store/types.js';
import { type Caller, rolesOf } from './auth.js';

/** What the sessions need of the store. */
export type SessionStore = Pick<
  Store,
  'putReviewSession' | 'getReviewSession' | 'touchReviewSession' | 'endReviewSession'
>;

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

/** The limits each server starts with (tests set a clock of their own). */
export const REVIEW_SESSION_LIMITS: ReviewSessionLimits = {
  idleMs: 30 * 60_000,
  maxMs: 12 * 60 * 60_000,
  perReviewer: 16,
  overall: 1024,
  now: () => Date.now(),
};

/** The cookie that carries a review session. */
export const REVIEW_COOKIE = 'clibroker_review';

const mac = (who: string, id: string, token: string): string =>
  createHmac('sha256', token).update(`clibroker-review-session:${who}:${id}`).digest('base64url');

/** The cookie's value in a Cookie header, or undefined. */
function cookieValue(header: string | undefined): string | undefined {
  return new RegExp(`(?:^|;\\s*)${REVIEW_COOKIE}=([^;]+)`).exec(header ?? '')?.[1];
}

/** What the store keeps for a session: a hash of the cookie's id. */
const stored = (id: string): string =>
  createHash('sha256').update(`clibroker-review:${id}`).digest('base64url');

export class ReviewSessions {
  readonly #limits: ReviewSessionLimits;
  readonly #store: SessionStore;

  constructor(store: SessionStore, limits: Partial<ReviewSessionLimits> = {}) {
    this.#store = store;
    this.#limits = { ...REVIEW_SESSION_LIMITS, ...limits };
  }

  /** The cookie's Max-Age, in seconds: the absolute lifetime. */
  get maxAgeSeconds(): number {
    return Math.floor(this.#limits.maxMs / 1000);
  }

  /** A new session for a reviewer who just signed in with `token`: the cookie's value. */
  async issue(who: string, token: string): Promise<string> {
    const now = this.#limits.now();
    const id = randomBytes(32).toString('base64url');
    await this.#store.putReviewSession(
      { id: stored(id), who, issuedAt: now, lastSeen: now },
      {
        issuedAfter: now - this.#limits.maxMs,
        seenAfter: now - this.#limits.idleMs,
        perReviewer: this.#limits.perReviewer,
        overall: this.#limits.overall,
      },
    );
    return `${id}.${mac(who, id, token)}`;
  }

  /**
   * The reviewer a request's Cookie header signs in, or undefined; a session found expired
   * or made with a token since rotated is ended. `touch` (the default) counts the request as
   * the reviewer's activity; the page's background refresh passes false, so an open tab
   * alone does not keep a session alive.
   */
  async caller(cookie: string | undefined, tokens: ServeTokens, touch = true): Promise<Caller | undefined> {
    const found = await this.#find(cookie, tokens);
    if (!found) return undefined;
    if (touch) await this.#store.touchReviewSession(found.id, this.#limits.now());
    return { role: 'reviewer', who: found.session.who };
  }

  /** Sign-out: the request's session (if it is a live one) is ended for good, on every replica. */
  async end(cookie: string | undefined, tokens: ServeTokens): Promise<void> {
    const found = await this.#find(cookie, tokens);
    if (found) await this.#store.endReviewSession(found.id);
  }

  #expired(s: ReviewSessionRecord, now: number): boolean {
    return now - s.issuedAt >= this.#limits.maxMs || now - s.lastSeen >= this.#limits.idleMs;
  }

  async #find(
    cookie: string | undefined,
    tokens: ServeTokens,
  ): Promise<{ id: string; session: ReviewSessionRecord } | undefined> {
    const m = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/.exec(cookieValue(cookie) ?? '');
    if (!m) return undefined;
    const [, raw, got] = m as unknown as [string, string, string];
    const id = stored(raw);
    const session = await this.#store.getReviewSession(id);
    if (!session) return undefined;
    const token = tokens.reviewers.find(([w]) => w === session.who)?.[1];
    const want = Buffer.from(token ? mac(session.who, raw, token) : '');
    const ok =
      token !== undefined &&
      // a reviewer token that is also another role's (or another reviewer's) opens no session
      rolesOf(token, tokens).length === 1 &&
      want.length === got.length &&
      timingSafeEqual(want, Buffer.from(got));
    // a rotated token, a reviewer removed from the configuration, or past a lifetime: ended
    if (!ok || this.#expired(session, this.#limits.now())) {
      await this.#store.endReviewSession(id);
      return undefined;
    }
    return { id, session };
  }
}
