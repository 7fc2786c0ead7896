/**
 * A copy of the audit trail pushed to an OpenTelemetry collector as OTLP/HTTP JSON logs
 * (docs/audit.md, "Push to a collector"). The store is the audit trail; the push is a copy
 * on the side, so it never stands in a call's way:
 *
 *   store append resolves (seq) ─▶ queue (bounded: full, the oldest unsent seq is dropped)
 *   ─▶ a full batch, or the flush interval ─▶ the batch's rows read back from the store
 *   ─▶ POST {endpoint}/v1/logs ─▶ 2xx: sent │ network error, 429, 502, 503, 504: back off and
 *      again until the retry bound │ anything else, or the bound: the batch counts as failed
 *
 * Only seqs wait in the queue: the rows (with their chain hashes, as `audit export` writes
 * them) are read when their batch is sent. One batch is in flight at a time, so the collector
 * receives the events in the order they were stored. Close sends what is queued within a
 * bounded time and counts the rest as dropped.
 */
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { undici } from '../broker/undici.js';
import type { ChainRow, ChainSource } from '../store/chain.js';
import { otlpLogsRequest } from '../store/export.js';
import { MAX_LIMIT } from '../store/rows.js';
import type { Store } from '../store/types.js';

/** What the push was told: `audit.otlp` with its defaults, the header values read per POST. */
export interface AuditPushOptions {
  /** the collector's base URL; events go to `{endpoint}/v1/logs` */
  endpoint: string;
  /** the headers to send, read at every POST (their values are secrets: never logged) */
  headers: () => Promise<Record<string, string>>;
  batchSize: number;
  flushIntervalMs: number;
  maxQueue: number;
  retryForMs: number;
  timeoutMs: number;
  /** where the rows are read back from (the store the events were appended to) */
  source: ChainSource;
  logger?: Logger;
  /** how long close waits for the queue to drain (default 5 000 ms) */
  closeGraceMs?: number;
}

/** What the push has done since it started. */
export interface AuditPushStats {
  /** events the collector accepted */
  sent: number;
  /** events of batches the collector refused, or that were still failing at the retry bound */
  failed: number;
  /** events never tried: dropped from a full queue, or still queued when close gave up */
  dropped: number;
  /** events waiting now (the batch in flight included) */
  queued: number;
}

/** The first retry waits this long; each next one twice as long, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5_000;
const CLOSE_GRACE_MS = 5_000;
/** What the OTLP/HTTP specification calls retryable; any other answer is final. */
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

type Attempt = { ok: true } | { ok: false; retry: boolean; why: string };

/** The push of one host's audit events to one collector. */
export class AuditPush {
  readonly #o: AuditPushOptions;
  readonly #url: string;
  readonly #queue: number[] = [];
  readonly #stop = new AbortController();
  #inFlight = 0;
  #sent = 0;
  #failed = 0;
  #dropped = 0;
  #closing = false;
  #timer: NodeJS.Timeout | undefined;
  #draining: Promise<void> | undefined;
  #closed: Promise<AuditPushStats> | undefined;
  #dispatcher: Dispatcher | undefined;
  /** set while the collector is failing: what the burst has cost so far */
  #burst: { failed: number; attempts: number } | undefined;

  constructor(opts: AuditPushOptions) {
    this.#o = opts;
    this.#url = `${opts.endpoint.replace(/\/+$/, '')}/v1/logs`;
  }

  /** Queue a stored event for the collector. Never throws, never waits. */
  enqueue(seq: number): void {
    if (this.#closing) {
      this.#dropped++;
      return;
    }
    if (this.#queue.length >= this.#o.maxQueue) {
      // the oldest unsent goes: the store still has it, and the newest tell the most about now
      this.#queue.shift();
      this.#dropped++;
    }
    this.#queue.push(seq);
    if (this.#queue.length >= this.#o.batchSize) this.#kick();
    else if (!this.#draining) this.#arm();
  }

  stats(): AuditPushStats {
    return {
      sent: this.#sent,
      failed: this.#failed,
      dropped: this.#dropped,
      queued: this.#queue.length + this.#inFlight,
    };
  }

  /**
   * Send what is queued, waiting at most the grace; then stop: a request still in flight is
   * abandoned (failed), what is still queued is dropped. Idempotent.
   */
  close(): Promise<AuditPushStats> {
    this.#closing = true;
    this.#closed ??= (async () => {
      if (this.#timer) clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#kick();
      const grace = setTimeout(() => this.#stop.abort(), this.#o.closeGraceMs ?? CLOSE_GRACE_MS);
      await this.#draining;
      clearTimeout(grace);
      this.#stop.abort();
      this.#dropped += this.#queue.splice(0).length;
      await this.#dispatcher?.destroy().catch(() => {});
      const stats = this.stats();
      this.#o.logger?.info(
        { event: 'audit.push.stopped', endpoint: this.#o.endpoint, ...stats },
        'clibroker: audit push stopped',
      );
      return stats;
    })();
    return this.#closed;
  }

  /** The flush interval's timer, unless one is set: a batch that is not full waits for it. */
  #arm(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.#kick(), this.#o.flushIntervalMs);
    this.#timer.unref();
  }

  #kick(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
      if (this.#stop.signal.aborted || this.#queue.length === 0) return;
      if (this.#closing || this.#queue.length >= this.#o.batchSize) this.#kick();
      else this.#arm();
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0 && !this.#stop.signal.aborted) {
      const seqs = this.#queue.splice(0, this.#o.batchSize);
      this.#inFlight = seqs.length;
      try {
        await this.#send(seqs);
      } finally {
        this.#inFlight = 0;
      }
      // a batch that is not full waits for the interval, unless closing
      if (this.#queue.length < this.#o.batchSize && !this.#closing) break;
    }
  }

  /** One batch: read back, then POSTed until accepted, refused or out of retries. */
  async #send(seqs: number[]): Promise<void> {
    let rows: ChainRow[];
    try {
      rows = await readRows(this.#o.source, seqs);
    } catch (err) {
      this.#failing(seqs.length, 1, `the events could not be read back: ${(err as Error).message}`);
      return;
    }
    if (rows.length === 0) return;
    const body = JSON.stringify(otlpLogsRequest(rows));
    const until = Date.now() + this.#o.retryForMs;
    let backoff = FIRST_BACKOFF_MS;
    for (;;) {
      const r = await this.#post(body);
      if (r.ok) {
        this.#sent += rows.length;
        if (this.#burst) {
          this.#o.logger?.info(
            {
              event: 'audit.push.recovered',
              endpoint: this.#o.endpoint,
              burst: this.#burst,
              ...this.stats(),
            },
            'clibroker: audit push to the collector works again',
          );
          this.#burst = undefined;
        }
        return;
      }
      const last = !r.retry || this.#stop.signal.aborted || Date.now() + backoff > until;
      if (last) {
        this.#failing(rows.length, 1, r.why);
        return;
      }
      this.#failing(0, 1, r.why);
      if (!(await sleep(backoff, this.#stop.signal))) {
        this.#failing(rows.length, 0, r.why);
        return;
      }
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }

  /** Counts a failure; the first of a burst is logged (one line, until the collector works again). */
  #failing(events: number, attempts: number, why: string): void {
    this.#failed += events;
    if (this.#burst) {
      this.#burst.failed += events;
      this.#burst.attempts += attempts;
      return;
    }
    this.#burst = { failed: events, attempts };
    this.#o.logger?.warn(
      { event: 'audit.push.failing', endpoint: this.#o.endpoint, why, ...this.stats() },
      'clibroker: audit push to the collector failing; the store keeps every event',
    );
  }

  async #post(body: string): Promise<Attempt> {
    const { Agent, request } = undici();
    this.#dispatcher ??= new Agent({ connect: { timeout: this.#o.timeoutMs } });
    let headers: Record<string, string>;
    try {
      headers = await this.#o.headers();
    } catch (err) {
      // a header's secret that cannot be read now may be back at the next try (a rotation)
      return { ok: false, retry: true, why: (err as Error).message };
    }
    try {
      const res = await request(this.#url, {
        dispatcher: this.#dispatcher,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        headersTimeout: this.#o.timeoutMs,
        bodyTimeout: this.#o.timeoutMs,
        signal: this.#stop.signal,
      });
      await res.body.dump().catch(() => {});
      if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true };
      return {
        ok: false,
        retry: RETRYABLE_STATUS.has(res.statusCode),
        why: `the collector answered ${res.statusCode}`,
      };
    } catch (err) {
      const e = err as Error & { code?: string };
      return { ok: false, retry: true, why: e.code ? `${e.message} (${e.code})` : e.message };
    }
  }
}

/** Resolves true after `ms`, false at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (v: boolean) => {
      clearTimeout(t);
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    };
    const onAbort = () => done(false);
    const t = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort);
  });
}

/**
 * The stored rows of `seqs`, in seq order. Read as pages over the seqs' range (other brokers
 * over the same database may have stored events between them; those are skipped).
 */
export async function readRows(source: ChainSource, seqs: readonly number[]): Promise<ChainRow[]> {
  const want = [...new Set(seqs)].sort((a, b) => a - b);
  const wanted = new Set(want);
  const rows: ChainRow[] = [];
  let i = 0;
  while (i < want.length) {
    const from = want[i]!;
    const to = want.at(-1)!;
    const page = await source.chainRows({ after: from - 1, limit: Math.min(to - from + 1, MAX_LIMIT) });
    for (const r of page) if (wanted.has(Number(r.seq))) rows.push(r);
    const reached = page.length > 0 ? Number(page.at(-1)!.seq) : to;
    while (i < want.length && want[i]! <= reached) i++;
  }
  return rows;
}

/**
 * `store` whose appends are also queued for `push`, once stored: the call's own append
 * resolves as it would without the push (the queueing is synchronous and never throws).
 * Every other method is the store's own.
 */
export function pushingStore(store: Store, push: AuditPush): Store {
  const appendEvent: Store['appendEvent'] = async (event) => {
    const seq = await store.appendEvent(event);
    push.enqueue(seq);
    return seq;
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'appendEvent') return appendEvent;
      const v = Reflect.get(target, prop, target) as unknown;
      // a class's methods use its private fields: call them on the store itself
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
