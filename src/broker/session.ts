/**
 * A session: one call's view of the shared listener. It owns the proxy credentials the
 * child presents, the egress list, the tier, the budgets and every tunnel socket it opened,
 * so closing it (or its deadline) ends exactly its own traffic.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import { RedactMemo } from '../audit/redact.js';
import { ClassifyCache } from '../policy/classify-cache.js';
import { isDnsName } from '../policy/dns-name.js';
import type { WireOverride } from '../policy/types.js';
import { createCertificateAuthority } from './ca.js';
import { RefusalFold } from './fold.js';
import { LeafCache, type LeafSet, leafSet } from './leaf-cache.js';
import { checkSessionOptions } from './options.js';
import {
  type CredentialStamper,
  type Classification,
  type Decision,
  DEFAULT_LIMITS,
  type Limits,
  type RequestHead,
  type SessionOptions,
  type Tier,
} from './types.js';

/** Exact lower-case DNS name: no wildcard, IP literal, port, upper case or trailing dot. */
export { isDnsName };

/** What a session has carried so far; counters only, updated as the traffic flows. */
export interface SessionStats {
  requests: number;
  forwarded: number;
  refused: number;
  bytesUp: number;
  bytesDown: number;
}

/**
 * The key only the broker holds: `new Session` without it throws, so a host gets sessions from
 * `broker.openSession` alone (the package exports `Session` as a type, and this key not at all).
 */
export const SESSION_KEY: unique symbol = Symbol('clibroker.session');

/**
 * A call's session on a broker, from `broker.openSession`: the proxy URL and CA the child
 * gets, the egress and tier it is held to, and its deadline. Close it when the call ends.
 */
export class Session {
  /** session id: the user name in the proxy URL */
  readonly id: string;
  /** the exact DNS names the child may reach */
  readonly egress: ReadonlySet<string>;
  /** the tier its requests are decided against */
  readonly tier: Tier;
  /** the budgets in force: the session's own over the broker's over the defaults */
  readonly limits: Readonly<Limits>;
  /** @internal */
  readonly credentials: CredentialStamper | undefined;
  /** @internal */
  readonly decide: SessionOptions['decide'];
  /** @internal the session's override set, copied and frozen at open */
  readonly overrides: readonly WireOverride[];
  /** @internal classify's answers for this session's override set, by method and target */
  readonly classes: ClassifyCache;
  /** labels copied onto every audit event of the session */
  readonly labels: Readonly<Record<string, string>> | undefined;
  /** @internal */
  readonly onAudit: SessionOptions['onAudit'];
  /** requests and bytes so far */
  readonly stats: SessionStats = { requests: 0, forwarded: 0, refused: 0, bytesUp: 0, bytesDown: 0 };
  /** @internal the host and paths of this session's events, redacted once each */
  readonly redacted = new RedactMemo();
  /** @internal the refusals folded into summary events instead of one event each */
  readonly fold = new RefusalFold();
  /** @internal set when a per-session, name-constrained CA mints this session's leaves */
  readonly leaves: LeafCache | undefined;
  /** @internal the hosts one shared leaf covers for this session: its egress plus sign-in hosts */
  readonly leafSet: LeafSet | undefined;
  readonly #secretHash: Buffer;
  readonly #proxyUrl: string;
  readonly #caCertPem: string;
  readonly #sockets = new Set<Socket>();
  readonly #timer: NodeJS.Timeout;
  readonly #onClose: (s: Session) => void;
  readonly #deadlineAt: number;
  #closed = false;
  #expired = false;

  /** @internal only the broker constructs sessions (it alone holds `SESSION_KEY`) */
  constructor(
    key: typeof SESSION_KEY,
    opts: SessionOptions,
    env: {
      port: number;
      caCertPem: string;
      brokerLimits: Readonly<Limits>;
      /** the broker's shared leaf cache (a name-constrained session has its own) */
      leaves: LeafCache;
      onClose: (s: Session) => void;
    },
  ) {
    if (key !== SESSION_KEY) throw new TypeError('a Session comes from broker.openSession()');
    checkSessionOptions(opts);
    this.id = randomBytes(12).toString('hex');
    const secret = randomBytes(24).toString('base64url');
    this.#secretHash = createHash('sha256').update(secret).digest();
    this.#proxyUrl = `http://${this.id}:${secret}@127.0.0.1:${env.port}`;
    this.egress = new Set(opts.egress);
    this.tier = opts.tier ?? 'read';
    this.limits = Object.freeze({ ...DEFAULT_LIMITS, ...env.brokerLimits, ...opts.limits });
    this.credentials = opts.credentials;
    this.decide = opts.decide;
    // Copied and frozen: the classify cache's answers were read with this set, so a host that
    // changes its array after open changes nothing here (before, the next request saw it).
    this.overrides = deepFreeze(structuredClone(opts.overrides ?? []));
    this.classes = new ClassifyCache(this.overrides);
    this.labels = opts.labels;
    this.leafSet = leafSet([...this.egress, ...(opts.credentials?.extraHosts ?? [])]);
    this.onAudit = opts.onAudit;
    if (opts.nameConstrainedCa) {
      const ca = createCertificateAuthority({
        commonName: `clibroker session ${this.id}`,
        permittedHosts: [...this.egress, ...(opts.credentials?.extraHosts ?? [])],
      });
      this.leaves = new LeafCache(ca, 64);
      this.#caCertPem = ca.certPem;
    } else {
      this.leaves = undefined;
      this.#caCertPem = env.caCertPem;
    }
    // A normal egress list gets its one leaf context built now, off the first connection's
    // path; a longer one mints a leaf per group of hosts on first use.
    const whole = this.leafSet?.whole;
    if (whole) {
      const cache = this.leaves ?? env.leaves;
      setImmediate(() => {
        if (!this.#closed) cache.get(whole.key, whole.list);
      });
    }
    this.#onClose = env.onClose;
    this.#deadlineAt = Date.now() + this.limits.deadlineMs;
    this.#timer = setTimeout(() => {
      this.#expired = true;
      this.close();
    }, this.limits.deadlineMs);
  }

  /** `http://<id>:<secret>@127.0.0.1:<port>`: the child's HTTPS_PROXY. Holds the session secret. */
  get proxyUrl(): string {
    return this.#proxyUrl;
  }

  /** PEM of the CA the child must trust (the broker's, or this session's name-constrained one). */
  get caCertPem(): string {
    return this.#caCertPem;
  }

  /** close() ran, or the deadline did */
  get closed(): boolean {
    return this.#closed;
  }

  /** The deadline (not the host) closed the session. */
  get expired(): boolean {
    return this.#expired;
  }

  /** Tunnels (CONNECT sockets) open right now. */
  get openTunnels(): number {
    return this.#sockets.size;
  }

  /** Milliseconds until the deadline closes this session. */
  remainingMs(): number {
    return this.#deadlineAt - Date.now();
  }

  /** @internal Constant-time check of the secret from Proxy-Authorization (hashes equalise lengths). */
  verifySecret(secret: string): boolean {
    return timingSafeEqual(createHash('sha256').update(secret).digest(), this.#secretHash);
  }

  /** Whether the child may reach `host` at all (egress, plus sign-in hosts the credentials declare). */
  allowsHost(host: string): boolean {
    return this.egress.has(host) || (this.credentials?.extraHosts?.includes(host) ?? false);
  }

  /** @internal Tracks a socket so close() and the deadline end it. Returns false if the session is closed. */
  adopt(socket: Socket): boolean {
    if (this.#closed) return false;
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    return true;
  }

  /** Ends every socket of the session and its deadline timer. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    this.#onClose(this);
  }
}

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

export type { Classification, Decision, RequestHead };
