/**
 * The server store: one PostgreSQL database shared by any number of brokers, through a
 * node-postgres pool per broker. This module is imported only when a postgres:// store is
 * opened, so nothing else loads `pg`.
 *
 * Every operation is one transaction. Single statements (append, approve, reject, consume)
 * run autocommitted: one round trip. A tier change takes a transaction-scoped advisory lock
 * on its assignment, so its read, its write and its event commit together and two brokers
 * cannot both raise the same switch. Consumption is one `UPDATE … RETURNING` over a
 * `FOR UPDATE SKIP LOCKED` pick: of any number of brokers, exactly one gets an approval.
 *
 * Connection loss: a call that cannot get a connection waits, retrying with backoff, up to
 * `reconnectWindowMs`; a call whose statement was already sent when the connection broke
 * is not retried (it may or may not have committed) and rejects with STORE_UNAVAILABLE.
 * An acknowledged call has committed: nothing resolved is ever lost.
 *
 * Several brokers (serve replicas) over one database: approve and reject NOTIFY
 * `clibroker_approvals` in their own statement, so a notice goes out only for a committed
 * decision; while anybody watches, one connection of its own (outside the pool) LISTENs and
 * is replaced with backoff when it drops. Review sessions and throttle counters are shared
 * through their tables, each put or update serialised by transaction-scoped advisory locks.
 * `ping` is the health check: one query raced against its timeout, never the reconnect window.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { BrokerError, brokerError, errorMessage, isBrokerError } from '../errors.js';
import { CHAIN_COLUMNS, type ChainHead, type ChainRow, type ChainSource, pruneChain } from './chain.js';
import { type LedgerRow, type Migration, migrateAsync, migrationChecksum } from './migrate.js';
import { PG_MIGRATIONS } from './pg-migrations.js';
import {
  type ApprovalRow,
  approvalFromRow,
  checkDigest,
  checkLimit,
  checkOrder,
  checkSeq,
  checkText,
  checkTime,
  checkRetentionDays,
  checkKey,
  checkMs,
  checkTimeout,
  checkTier,
  CONFORMANCE_COLUMNS,
  type ConformanceRow,
  checkSha256,
  conformanceFromRow,
  conformanceParams,
  eventRow,
  prunable,
  pruneInput,
  type ReviewSessionRow,
  reviewSessionFromRow,
  reviewSessionInput,
  type ThrottleRow,
  throttleFromRow,
  throttleKeys,
  throttleOutput,
  toMs,
  toolArgsJson,
} from './rows.js';
import { callWatchers } from './watchers.js';
import { startRetention } from './retention.js';
import {
  type Approval,
  type ApprovalQuery,
  type CliTierKey,
  type ConformanceVerdict,
  type EventQuery,
  type NewApproval,
  type NewConformanceVerdict,
  type PruneEvent,
  type PruneInput,
  type PruneResult,
  type ReviewSessionBounds,
  type ReviewSessionRecord,
  type SetTierInput,
  type SetTierResult,
  STORE_EVENT_TYPES,
  type Store,
  type StoredEvent,
  type StoreEvent,
  type StoreEventType,
  type ThrottleCounter,
  type Tier,
  type TierChangeEvent,
} from './types.js';
import { redactStoreUrl } from './url.js';

/** How a PostgreSQL store connects and migrates. */
export interface PostgresStoreOptions {
  /** the clock for created/decided/consumed times and tier events (tests) */
  now?: () => Date;
  /** connections this broker may hold; 10 */
  poolSize?: number;
  /** how long a call waits for an unreachable database before STORE_UNAVAILABLE; 10 000 ms */
  reconnectWindowMs?: number;
  /**
   * Apply pending migrations while opening (`clibroker store migrate`, tests). Brokers leave
   * it off: a shared database changes schema only when an operator migrates it.
   */
  migrate?: boolean;
  /**
   * Retention: prune audit events older than this many days when opened and hourly (as
   * `pruneEvents`, by `retention`; every broker sharing the database may run it). Absent: keep forever.
   */
  retentionDays?: number;
  /** hears a failed retention prune (log it); the store keeps working */
  onRetentionError?: (err: unknown) => void;
  /** the migrations to check and apply (tests) */
  migrations?: readonly Migration[];
}

/** The PostgreSQL store: the `Store` interface plus what only a server database has. */
export interface PostgresStore extends Store {
  /** The highest applied migration. */
  schemaVersion(): Promise<number>;
}

/** Any constant: the advisory lock key migrations hold, so two brokers never migrate at once. */
const MIGRATION_LOCK = 0x636c6962; // 'clib'

const CREATE_LEDGER = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  checksum   text NOT NULL,
  applied_at text NOT NULL
)`;

/** Whether a migration only adds, so older builds still open the database (Migration.additive). */
const LEDGER_ADDITIVE =
  'ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS additive boolean NOT NULL DEFAULT false';

/** Errors that mean the connection, not the statement, failed (node errnos and SQLSTATE classes 08 and 57P). */
function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (/^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOENT|EAI_AGAIN)$/.test(code))
    return true;
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return true;
  const msg = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(
    msg,
  );
}

/** A failure to connect that waiting cannot cure: wrong password, no such database or role. */
function isPermanentConnectError(err: unknown): boolean {
  const code = String((err as { code?: unknown })?.code ?? '');
  return code.startsWith('28') || code === '3D000' || code === 'ENOTFOUND';
}

const TIER_SQL = {
  lock: "SELECT pg_advisory_xact_lock(hashtextextended($1 || E'\\x1f' || $2 || E'\\x1f' || $3, 0))",
  get: 'SELECT allow FROM cli_tiers WHERE extension_id = $1 AND assignment_id = $2 AND cli_id = $3',
  put: `INSERT INTO cli_tiers (extension_id, assignment_id, cli_id, allow, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (extension_id, assignment_id, cli_id) DO UPDATE SET allow = excluded.allow, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
};

const INSERT_EVENT =
  'INSERT INTO audit_events (type, time, time_ms, run_id, extension_id, decision, data) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq';

/** Reading the audit chain (chain.ts); appends are chained by the schema's insert trigger. */
const CHAIN_SQL = {
  head: 'SELECT seq, hash FROM audit_chain WHERE id = 1',
  lockHead: 'SELECT seq, hash FROM audit_chain WHERE id = 1 FOR UPDATE',
  rows: `SELECT ${CHAIN_COLUMNS} FROM audit_events WHERE seq > $1 ORDER BY seq LIMIT $2`,
  runRows: `SELECT ${CHAIN_COLUMNS} FROM audit_events WHERE run_id = $3 AND seq > $1 ORDER BY seq LIMIT $2`,
  // the chained seqs left around a prune's deleted ones: the one before, those kept between, the one after
  around: `SELECT seq FROM (SELECT max(seq) AS seq FROM audit_events WHERE hash IS NOT NULL AND seq < $1) b WHERE seq IS NOT NULL
           UNION ALL SELECT seq FROM audit_events WHERE hash IS NOT NULL AND seq > $1 AND seq < $2
           UNION ALL SELECT seq FROM (SELECT min(seq) AS seq FROM audit_events WHERE hash IS NOT NULL AND seq > $2) a WHERE seq IS NOT NULL
           ORDER BY seq`,
};

/** The chained seqs left around `gone` (ascending), inside the prune's transaction. */
async function chainedAround(c: pg.PoolClient, gone: readonly { seq: number }[]): Promise<number[]> {
  const rows = await c.query<{ seq: string }>(CHAIN_SQL.around, [gone[0]!.seq, gone[gone.length - 1]!.seq]);
  return rows.rows.map((r) => Number(r.seq));
}

/** The channel approve and reject notify on, with the approval's id as the payload. */
export const APPROVALS_CHANNEL = 'clibroker_approvals';

/** The listener's reconnect backoff: first wait and cap, ms. */
const LISTEN_BACKOFF_MS = 100;
const LISTEN_BACKOFF_MAX_MS = 5_000;

/** Serialises every `putReviewSession` (the overall bound spans all reviewers): 'clrs'. */
const REVIEW_SESSIONS_LOCK = 0x636c7273;

const SESSION_SQL = {
  drop: 'DELETE FROM review_sessions WHERE id = $1',
  expire: 'DELETE FROM review_sessions WHERE issued_at < $1 OR last_seen < $2',
  // keep the reviewer's newest `keep` (the new one makes it perReviewer), end the rest
  trimReviewer: `DELETE FROM review_sessions WHERE id IN (
    SELECT id FROM review_sessions WHERE who = $1 ORDER BY issued_at DESC, seq DESC OFFSET $2)`,
  trimOverall: `DELETE FROM review_sessions WHERE id IN (
    SELECT id FROM review_sessions ORDER BY issued_at DESC, seq DESC OFFSET $1)`,
  insert: 'INSERT INTO review_sessions (id, who, issued_at, last_seen) VALUES ($1, $2, $3, $4)',
  get: 'SELECT id, who, issued_at, last_seen FROM review_sessions WHERE id = $1',
  touch: 'UPDATE review_sessions SET last_seen = $2 WHERE id = $1 AND last_seen < $2',
};

const THROTTLE_SQL = {
  // one lock per key, taken in hash order: two updates sharing keys cannot deadlock
  hashes: `SELECT DISTINCT hashtextextended('clibroker.throttle' || E'\\x1f' || k, 0) AS h FROM unnest($1::text[]) AS k ORDER BY h`,
  lock: 'SELECT pg_advisory_xact_lock($1::bigint)',
  read: 'SELECT key, window_start, failures, last, locked_until, strikes FROM serve_throttle WHERE key = ANY($1::text[])',
  put: `INSERT INTO serve_throttle (key, window_start, failures, last, locked_until, strikes)
        SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
        ON CONFLICT (key) DO UPDATE SET window_start = excluded.window_start, failures = excluded.failures,
          last = excluded.last, locked_until = excluded.locked_until, strikes = excluded.strikes`,
  // SKIP LOCKED: a stale row another update holds is theirs to refresh (or forget); waiting
  // for it here while they wait for one of ours would deadlock
  forget: `DELETE FROM serve_throttle WHERE greatest(last, locked_until) < $1 AND key IN (
    SELECT key FROM serve_throttle WHERE greatest(last, locked_until) < $1 FOR UPDATE SKIP LOCKED)`,
};

/** SQLSTATEs after which the whole transaction may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);

const APPROVAL_COLUMNS =
  'id, run_id, digest, method, host, path, graphql_operation, body_preview, tool, tool_args, status, created_at, decided_at, decided_by, consumed_at, held_until';

class PgStore implements PostgresStore, ChainSource {
  readonly #pool: pg.Pool;
  readonly #now: () => Date;
  readonly #where: string;
  readonly #secrets: string[];
  readonly #windowMs: number;
  readonly #url: string;
  readonly #watchers = new Set<(id: string) => void>();
  /** the one connection (not pooled) that LISTENs while anybody watches */
  #listener: pg.Client | undefined;
  #listenRetry: NodeJS.Timeout | undefined;
  #listenBackoff = LISTEN_BACKOFF_MS;
  #closed = false;
  #pruner: NodeJS.Timeout | undefined;
  readonly #queue: { params: unknown[]; resolve(seq: number): void; reject(err: unknown): void }[] = [];
  #flushing: Promise<void> | undefined;

  constructor(pool: pg.Pool, url: string, now: () => Date, windowMs: number) {
    this.#pool = pool;
    this.#now = now;
    this.#where = redactStoreUrl(url);
    this.#windowMs = windowMs;
    this.#url = url;
    // Scrubbed from every message we build from a driver error, whatever the driver put in it.
    this.#secrets = secretsOf(url);
  }

  #scrub(text: string): string {
    let out = text;
    for (const s of this.#secrets) out = out.split(s).join('***');
    return out;
  }

  /** `inFlight`: the statement had been sent when the connection broke (it may have committed). */
  #unavailable(what: string, err: unknown, inFlight = false): BrokerError {
    const e = err as { code?: unknown; message?: unknown };
    // the driver's words name the server's address: they go to details (dropped by the front
    // doors with the location), the message keeps only the code
    const said = this.#scrub(
      [e?.code, e?.message].filter((x) => typeof x === 'string' && x !== '').join(': ') || String(err),
    ).slice(0, 300);
    const why =
      typeof e?.code === 'string' && /^[A-Z0-9_]{2,32}$/.test(e.code) ? e.code : 'the connection failed';
    return brokerError(
      'STORE_UNAVAILABLE',
      { what, why },
      { details: { store: this.#where, storeError: said, inFlight } },
    );
  }

  /** A pooled connection, waiting with backoff while the database cannot be reached. */
  async #connect(what: string): Promise<pg.PoolClient> {
    const deadline = Date.now() + this.#windowMs;
    let delay = 25;
    for (;;) {
      if (this.#closed) throw new BrokerError('STORE_CLOSED');
      try {
        return await this.#pool.connect();
      } catch (err) {
        if (!isConnectionError(err) || isPermanentConnectError(err) || Date.now() + delay > deadline)
          throw this.#unavailable(what, err);
        await sleep(delay);
        delay = Math.min(delay * 2, 1_000);
      }
    }
  }

  /**
   * Run `fn` on one connection; in a transaction when `tx`. A broken connection is dropped
   * from the pool and the call rejects with STORE_UNAVAILABLE; any other failure rolls back
   * and rejects with `code` (what a write says), the database's message kept.
   */
  async #run<T>(
    what: string,
    tx: boolean,
    fn: (c: pg.PoolClient) => Promise<T>,
    code: 'STORE_WRITE_FAILED' | 'INTERNAL_ERROR' = 'STORE_WRITE_FAILED',
  ): Promise<T> {
    if (this.#closed) throw new BrokerError('STORE_CLOSED');
    const client = await this.#connect(what);
    // A connection that breaks while checked out also emits 'error'; unheard, it would crash the process.
    const onError = (): void => {};
    client.on('error', onError);
    let broken: unknown;
    try {
      if (tx) await client.query('BEGIN');
      const out = await fn(client);
      if (tx) await client.query('COMMIT');
      return out;
    } catch (err) {
      if (isConnectionError(err)) {
        broken = err;
        throw this.#unavailable(what, err, true);
      }
      if (tx) await client.query('ROLLBACK').catch((e: unknown) => (broken = e));
      if (isBrokerError(err)) throw err;
      const cause = this.#scrub((err as Error).message);
      throw code === 'STORE_WRITE_FAILED'
        ? brokerError('STORE_WRITE_FAILED', { what, cause })
        : brokerError('INTERNAL_ERROR', { reason: `${what}: ${cause}` });
    } finally {
      client.off('error', onError);
      client.release(broken instanceof Error ? broken : broken === undefined ? undefined : true);
    }
  }

  /**
   * A read changes nothing, so unlike a write it is safe to send again: one broken
   * connection (typically an idle one the server closed in a restart, before the pool heard)
   * is retried once on a fresh connection.
   */
  async #read<T>(what: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await this.#run(what, false, fn, 'INTERNAL_ERROR');
    } catch (err) {
      if (
        !isBrokerError(err) ||
        err.code !== 'STORE_UNAVAILABLE' ||
        err.details?.['inFlight'] !== true ||
        this.#closed
      )
        throw err;
      return this.#run(what, false, fn, 'INTERNAL_ERROR');
    }
  }

  async getAssignmentTier(key: CliTierKey): Promise<Tier> {
    const params = [
      checkText('extensionId', key.extensionId),
      checkText('assignmentId', key.assignmentId),
      checkText('cliId', key.cliId),
    ];
    return this.#read(
      'tier not read',
      async (c) => (await c.query<{ allow: Tier }>(TIER_SQL.get, params)).rows[0]?.allow ?? 'read',
    );
  }

  async setAssignmentTier(input: SetTierInput): Promise<SetTierResult> {
    const extensionId = checkText('extensionId', input.extensionId);
    const assignmentId = checkText('assignmentId', input.assignmentId);
    const cliId = checkText('cliId', input.cliId);
    const who = checkText('who', input.who);
    const tier = checkTier(input.tier);
    const key = [extensionId, assignmentId, cliId];
    return this.#run('tier change not saved', true, async (c) => {
      await c.query(TIER_SQL.lock, key);
      const previous = (await c.query<{ allow: Tier }>(TIER_SQL.get, key)).rows[0]?.allow ?? 'read';
      if (previous === tier) return { previous, tier, changed: false };
      const at = this.#now().toISOString();
      await c.query(TIER_SQL.put, [...key, tier, at, who]);
      const event: TierChangeEvent = {
        type: tier === 'write' ? 'extension.cli_tier.raised' : 'extension.cli_tier.lowered',
        time: at,
        extensionId,
        assignmentId,
        cliId,
        who,
        previous,
        new: tier,
      };
      // Same transaction: if this insert fails, the tier row above is rolled back with it.
      await c.query(INSERT_EVENT, eventParams(event));
      return { previous, tier, changed: true, event };
    });
  }

  async createApproval(a: NewApproval): Promise<Approval> {
    const toolArgs = toolArgsJson(a.toolArgs);
    const params = [
      randomUUID(),
      checkText('runId', a.runId),
      checkDigest(a.digest),
      checkText('method', a.method),
      checkText('host', a.host),
      checkText('path', a.path),
      a.graphqlOperation ?? null,
      a.bodyPreview ?? null,
      checkText('tool', a.tool),
      toolArgs,
      this.#now().toISOString(),
    ];
    const sql = `INSERT INTO approvals (id, run_id, digest, method, host, path, graphql_operation, body_preview, tool, tool_args, status, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11) RETURNING ${APPROVAL_COLUMNS}`;
    return this.#run('approval not recorded', false, async (c) =>
      approvalFromRow((await c.query<ApprovalRow>(sql, params)).rows[0]!),
    );
  }

  async getApproval(id: string): Promise<Approval | undefined> {
    return this.#read('approval not read', async (c) => {
      const row = (
        await c.query<ApprovalRow>(`SELECT ${APPROVAL_COLUMNS} FROM approvals WHERE id = $1`, [String(id)])
      ).rows[0];
      return row && approvalFromRow(row);
    });
  }

  async listApprovals(q: ApprovalQuery = {}): Promise<Approval[]> {
    const where: string[] = [];
    const params: unknown[] = [checkLimit(q.limit)];
    if (q.status !== undefined) {
      params.push(q.status);
      where.push(`status = $${params.length}`);
    }
    if (q.runId !== undefined) {
      params.push(q.runId);
      where.push(`run_id = $${params.length}`);
    }
    const dir = checkOrder(q.order);
    const sql = `SELECT ${APPROVAL_COLUMNS} FROM approvals${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at ${dir}, seq ${dir} LIMIT $1`;
    return this.#read('approvals not listed', async (c) =>
      (await c.query<ApprovalRow>(sql, params)).rows.map(approvalFromRow),
    );
  }

  approve(id: string, who: string): Promise<Approval> {
    return this.#decide(id, who, 'approved');
  }

  reject(id: string, who: string): Promise<Approval> {
    return this.#decide(id, who, 'rejected');
  }

  async #decide(id: string, who: string, to: 'approved' | 'rejected'): Promise<Approval> {
    checkText('who', who);
    const decided = await this.#run(`approval not ${to}`, false, async (c) => {
      // One conditional UPDATE: a racing decision on another broker re-checks `status` after
      // this one commits, finds it no longer pending and changes nothing. The notice is part
      // of the same autocommitted statement: PostgreSQL delivers it only when the decision
      // commits, and never for an UPDATE that changed nothing.
      const done = await c.query<ApprovalRow>(
        `WITH done AS (
           UPDATE approvals SET status = $2, decided_at = $3, decided_by = $4 WHERE id = $1 AND status = 'pending'
           RETURNING ${APPROVAL_COLUMNS})
         SELECT done.*, pg_notify('${APPROVALS_CHANNEL}', done.id) AS notified FROM done`,
        [String(id), to, this.#now().toISOString(), who],
      );
      if (done.rows[0]) return approvalFromRow(done.rows[0]);
      const current = (
        await c.query<{ status: string }>('SELECT status FROM approvals WHERE id = $1', [String(id)])
      ).rows[0];
      if (!current) throw new BrokerError('APPROVAL_NOT_FOUND', { details: { id } });
      throw new BrokerError('APPROVAL_NOT_PENDING', { details: { id, status: current.status, wanted: to } });
    });
    // Committed. This store object's own watchers hear it now, LISTEN or not (they may hear
    // it again through the notice: a notice may repeat).
    callWatchers(this.#watchers, decided.id);
    return decided;
  }

  async consumeApproved(digest: string, runId: string): Promise<Approval | undefined> {
    const params = [checkDigest(digest), checkText('runId', runId), this.#now().toISOString()];
    // SKIP LOCKED: a consumer that finds the row taken by another one's open transaction
    // gets nothing rather than waiting to take it after; `status` is checked again by the
    // UPDATE itself, so a row consumed meanwhile is never consumed twice.
    const sql = `UPDATE approvals SET status = 'consumed', consumed_at = $3
                 WHERE status = 'approved' AND id = (
                   SELECT id FROM approvals WHERE run_id = $2 AND digest = $1 AND status = 'approved'
                   ORDER BY created_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED)
                 RETURNING ${APPROVAL_COLUMNS}`;
    return this.#run('approval not consumed', false, async (c) => {
      const row = (await c.query<ApprovalRow>(sql, params)).rows[0];
      return row && approvalFromRow(row);
    });
  }

  async holdApproval(id: string, until: string | null): Promise<void> {
    const params = [checkText('id', id), until === null ? null : checkTime('until', until)];
    await this.#run('approval hold not recorded', false, async (c) => {
      await c.query("UPDATE approvals SET held_until = $2 WHERE id = $1 AND status = 'pending'", params);
    });
  }

  async releaseApproval(id: string): Promise<Approval | undefined> {
    const params = [checkText('id', id)];
    const sql = `UPDATE approvals SET status = 'approved', consumed_at = NULL WHERE id = $1 AND status = 'consumed'
                 RETURNING ${APPROVAL_COLUMNS}`;
    return this.#run('approval not released', false, async (c) => {
      const row = (await c.query<ApprovalRow>(sql, params)).rows[0];
      return row && approvalFromRow(row);
    });
  }

  /**
   * Appends go through one queue per store: while a batch is being written, later events
   * wait and go together in the next one (one multi-row INSERT, one round trip, all or
   * nothing). So a broker's events keep their call order in `seq`, as on SQLite, and a
   * burst costs one round trip, not one each. An idle store writes an event at once.
   */
  appendEvent(event: StoreEvent): Promise<number> {
    if (this.#closed) return Promise.reject(new BrokerError('STORE_CLOSED'));
    let params: unknown[];
    try {
      params = eventParams(event);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ params, resolve, reject });
      if (!this.#flushing) this.#flushing = this.#flush();
    });
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MAX_BATCH);
      try {
        const seqs = await this.#run('audit event not written', false, (c) =>
          insertEvents(
            c,
            batch.map((b) => b.params),
          ),
        );
        for (const [i, b] of batch.entries()) b.resolve(seqs[i]!);
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.#flushing = undefined;
  }

  async listEvents(q: EventQuery = {}): Promise<StoredEvent[]> {
    const { sql, params } = eventQuery(q);
    return this.#read('audit events not read', async (c) =>
      (await c.query<{ seq: string; data: string }>(sql, params)).rows.map((r) => ({
        seq: Number(r.seq),
        event: JSON.parse(r.data) as StoreEvent,
      })),
    );
  }

  async recordConformance(v: NewConformanceVerdict): Promise<ConformanceVerdict> {
    const params = [...conformanceParams(v), this.#now().toISOString()];
    const sql = `INSERT INTO conformance_verdicts (sha256, image, executable, verdict, code, tool, time)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${CONFORMANCE_COLUMNS}`;
    return this.#run('conformance verdict not recorded', false, async (c) =>
      conformanceFromRow((await c.query<ConformanceRow>(sql, params)).rows[0]!),
    );
  }

  async conformanceFor(sha256: string): Promise<ConformanceVerdict | undefined> {
    const params = [checkSha256(sha256)];
    return this.#read('conformance verdict not read', async (c) => {
      const row = (
        await c.query<ConformanceRow>(
          `SELECT ${CONFORMANCE_COLUMNS} FROM conformance_verdicts WHERE sha256 = $1 ORDER BY seq DESC LIMIT 1`,
          params,
        )
      ).rows[0];
      return row && conformanceFromRow(row);
    });
  }

  async pruneEvents(input: PruneInput): Promise<PruneResult> {
    const { cutoff, before, dryRun, who } = pruneInput(input);
    if (dryRun)
      return this.#read('audit events not counted', async (c) => {
        const sql = `SELECT count(*) AS n FROM audit_events WHERE ${prunable('$1')}`;
        return { events: Number((await c.query<{ n: string }>(sql, [cutoff])).rows[0]!.n), before, dryRun };
      });
    return this.#run('audit events not pruned', true, async (c) => {
      // The chain's head first, held to the end: no append lands between the delete and this
      // prune's event, so the event's seq is known (head + 1) and its gaps are complete.
      const head = await c.query<{ seq: string }>(CHAIN_SQL.lockHead);
      const own = Number(head.rows[0]!.seq) + 1;
      // The append-only trigger lets a DELETE through only below the cutoff set for this
      // transaction, and never an event of a run with an open approval.
      await c.query("SELECT set_config('clibroker.prune_before_ms', $1, true)", [String(cutoff)]);
      const gone = (
        await c.query<{ seq: string; hash: string | null }>(
          `DELETE FROM audit_events WHERE ${prunable('$1')} RETURNING seq, hash`,
          [cutoff],
        )
      ).rows
        .map((r) => ({ seq: Number(r.seq), hash: r.hash }))
        .sort((a, b) => a.seq - b.seq);
      const events = gone.length;
      const chain = gone.length > 0 ? pruneChain(gone, await chainedAround(c, gone), own) : undefined;
      const event: PruneEvent = {
        type: 'store.events.pruned',
        time: this.#now().toISOString(),
        who: who!,
        before,
        events,
        ...(chain ? { chain } : {}),
      };
      // Same transaction: if this insert fails, the delete above is rolled back with it.
      await c.query(INSERT_EVENT, eventParams(event));
      return { events, before, dryRun, event };
    });
  }

  async chainRows(q: { after: number; limit: number; runId?: string }): Promise<ChainRow[]> {
    const limit = checkLimit(q.limit);
    const [sql, params] =
      q.runId === undefined
        ? [CHAIN_SQL.rows, [q.after, limit]]
        : [CHAIN_SQL.runRows, [q.after, limit, q.runId]];
    return this.#read('audit chain not read', async (c) =>
      (await c.query<ChainRow>(sql, params)).rows.map((r) => ({
        ...r,
        seq: Number(r.seq),
        time_ms: Number(r.time_ms),
      })),
    );
  }

  async chainHead(): Promise<ChainHead> {
    return this.#read('audit chain not read', async (c) => {
      const row = (await c.query<{ seq: string; hash: string | null }>(CHAIN_SQL.head)).rows[0]!;
      return { seq: Number(row.seq), hash: row.hash };
    });
  }

  /** Check the schema over one connection and, when `migrate`, apply what is pending. */
  migrateWith(migrations: readonly Migration[], migrate: boolean, now: () => Date): Promise<number[]> {
    return this.#run('schema not checked', false, (c) => migrateOrCheck(c, migrations, migrate, now));
  }

  async schemaVersion(): Promise<number> {
    return this.#read('schema version not read', (c) => ledgerVersion(c));
  }

  /** Prune now and hourly (see retention.ts). */
  startRetention(days: number, onError: (err: unknown) => void): Promise<void> {
    const { first, timer } = startRetention((i) => this.pruneEvents(i), days, this.#now, onError);
    this.#pruner = timer;
    return first;
  }

  /**
   * One `SELECT 1` on a pooled connection, raced against `timeoutMs`: no reconnect window.
   * A connection found broken (an idle one the server dropped) is thrown away and, time
   * left, the query is tried once more on a fresh one.
   */
  async ping(timeoutMs?: number): Promise<void> {
    const ms = checkTimeout(timeoutMs, 2_000);
    if (this.#closed) throw new BrokerError('STORE_CLOSED');
    const deadline = Date.now() + ms;
    const attempt = async (): Promise<void> => {
      const client = await this.#pool.connect();
      const onError = (): void => {};
      client.on('error', onError);
      let broken: unknown;
      try {
        // query_timeout (honoured per query by pg, missing from its types): a server that
        // accepted the connection but does not answer breaks this connection, not the pool
        const q = { text: 'SELECT 1', query_timeout: Math.max(1, deadline - Date.now()) };
        await client.query(q);
      } catch (err) {
        broken = err;
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken === undefined ? undefined : broken instanceof Error ? broken : true);
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    });
    try {
      const work = attempt().catch((err: unknown) => {
        if (isConnectionError(err) && !this.#closed && Date.now() < deadline) return attempt();
        throw err;
      });
      // the loser of the race must not become an unhandled rejection
      work.catch(() => {});
      await Promise.race([work, timeout]);
    } catch (err) {
      if (this.#closed) throw new BrokerError('STORE_CLOSED');
      throw this.#unavailable('store ping', err);
    } finally {
      clearTimeout(timer);
    }
  }

  watchApprovals(fn: (id: string) => void): () => void {
    if (this.#closed) throw new BrokerError('STORE_CLOSED');
    if (typeof fn !== 'function')
      throw brokerError('STORE_INPUT_INVALID', { reason: 'a watcher is a function' }, { details: {} });
    // a wrapper per call: the same function watching twice is unsubscribed once each
    const entry = (id: string): void => fn(id);
    this.#watchers.add(entry);
    this.#listen();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#watchers.delete(entry);
      if (this.#watchers.size === 0) void this.#unlisten();
    };
  }

  /**
   * Open the listening connection if someone watches and none is open or pending. It is a
   * client of its own, not the pool's: LISTEN belongs to a session, and a pooled connection
   * goes back to others. When it fails or drops it is replaced after a backoff (doubling to
   * LISTEN_BACKOFF_MAX_MS, reset once LISTEN succeeds); notices sent meanwhile are lost.
   */
  #listen(): void {
    if (this.#closed || this.#watchers.size === 0 || this.#listener || this.#listenRetry) return;
    const client = new pg.Client({
      connectionString: this.#url,
      application_name: 'clibroker-listen',
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    this.#listener = client;
    let failed = false;
    const fail = (): void => {
      if (failed) return;
      failed = true;
      // an intentional end (unwatch, close) has already let go of it: nothing to replace
      if (this.#listener !== client) return;
      this.#listener = undefined;
      void endClient(client);
      this.#retryListen();
    };
    // never removed: an 'error' nobody hears would crash the process
    client.on('error', fail);
    client.on('end', fail);
    client.on('notification', (msg) => {
      if (msg.channel === APPROVALS_CHANNEL && msg.payload && this.#listener === client)
        callWatchers(this.#watchers, msg.payload);
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${APPROVALS_CHANNEL}`))
      .then(() => {
        if (this.#listener === client) this.#listenBackoff = LISTEN_BACKOFF_MS;
      }, fail);
  }

  #retryListen(): void {
    if (this.#closed || this.#watchers.size === 0 || this.#listenRetry) return;
    const delay = this.#listenBackoff;
    this.#listenBackoff = Math.min(delay * 2, LISTEN_BACKOFF_MAX_MS);
    this.#listenRetry = setTimeout(() => {
      this.#listenRetry = undefined;
      this.#listen();
    }, delay);
  }

  /** Stop listening: no retry pending, the connection ended. */
  async #unlisten(): Promise<void> {
    clearTimeout(this.#listenRetry);
    this.#listenRetry = undefined;
    this.#listenBackoff = LISTEN_BACKOFF_MS;
    const client = this.#listener;
    this.#listener = undefined;
    if (client) await endClient(client);
  }

  async putReviewSession(session: ReviewSessionRecord, bounds: ReviewSessionBounds): Promise<void> {
    const { session: s, bounds: b } = reviewSessionInput(session, bounds);
    await this.#run('review session not recorded', true, async (c) => {
      // One put at a time over the whole database, whichever broker: each one's trim sees
      // every session the others committed, so together they never exceed the bounds.
      await c.query('SELECT pg_advisory_xact_lock($1)', [REVIEW_SESSIONS_LOCK]);
      // a re-issued id is a new session: its old row goes first and is not counted
      await c.query(SESSION_SQL.drop, [s.id]);
      await c.query(SESSION_SQL.expire, [b.issuedAfter, b.seenAfter]);
      await c.query(SESSION_SQL.trimReviewer, [s.who, b.perReviewer - 1]);
      await c.query(SESSION_SQL.trimOverall, [b.overall - 1]);
      await c.query(SESSION_SQL.insert, [s.id, s.who, s.issuedAt, s.lastSeen]);
    });
  }

  async getReviewSession(id: string): Promise<ReviewSessionRecord | undefined> {
    const params = [checkKey('id', id)];
    return this.#read('review session not read', async (c) => {
      const row = (await c.query<ReviewSessionRow>(SESSION_SQL.get, params)).rows[0];
      return row && reviewSessionFromRow(row);
    });
  }

  async touchReviewSession(id: string, at: number): Promise<void> {
    const params = [checkKey('id', id), checkMs('at', at)];
    // `last_seen < $2` in the UPDATE: of racing touches the latest wins, whatever the order
    await this.#run('review session not touched', false, (c) => c.query(SESSION_SQL.touch, params));
  }

  async endReviewSession(id: string): Promise<void> {
    const params = [checkKey('id', id)];
    await this.#run('review session not ended', false, (c) => c.query(SESSION_SQL.drop, params));
  }

  async throttleCounters(keys: readonly string[]): Promise<Map<string, ThrottleCounter>> {
    const list = throttleKeys(keys);
    return this.#read('throttle not read', (c) => readThrottle(c, list));
  }

  async updateThrottle(
    keys: readonly string[],
    fn: (current: Map<string, ThrottleCounter>) => Map<string, ThrottleCounter>,
    forgetBefore: number,
  ): Promise<Map<string, ThrottleCounter>> {
    const list = throttleKeys(keys);
    const forget = checkMs('forgetBefore', forgetBefore);
    for (let attempt = 1; ; attempt++) {
      // What the callback throws is the caller's error, rethrown as it is; a serialization
      // failure or a deadlock (SQLSTATE) lets the whole transaction run once more.
      let thrown: { err: unknown } | undefined;
      let sqlstate: string | undefined;
      try {
        return await this.#run('throttle not updated', true, async (c) => {
          try {
            const hashes = (await c.query<{ h: string }>(THROTTLE_SQL.hashes, [list])).rows;
            for (const { h } of hashes) await c.query(THROTTLE_SQL.lock, [h]);
            const current = await readThrottle(c, list);
            let out: unknown;
            try {
              out = fn(current);
            } catch (err) {
              thrown = { err };
              throw err;
            }
            const rows = throttleOutput(list, out);
            if (rows.length > 0)
              await c.query(THROTTLE_SQL.put, [
                rows.map((r) => r.key),
                rows.map((r) => r.window_start),
                rows.map((r) => r.failures),
                rows.map((r) => r.last),
                rows.map((r) => r.locked_until),
                rows.map((r) => r.strikes),
              ]);
            await c.query(THROTTLE_SQL.forget, [forget]);
            return await readThrottle(c, list);
          } catch (err) {
            const code = (err as { code?: unknown })?.code;
            if (typeof code === 'string') sqlstate = code;
            throw err;
          }
        });
      } catch (err) {
        if (thrown) throw thrown.err;
        if (attempt === 1 && sqlstate !== undefined && RETRYABLE.has(sqlstate) && !this.#closed) continue;
        throw err;
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Events already accepted are written (or rejected) before the pool goes.
    await this.#flushing;
    this.#closed = true;
    if (this.#pruner) clearInterval(this.#pruner);
    this.#watchers.clear();
    await Promise.all([this.#unlisten(), this.#pool.end()]);
  }
}

/** The throttle counters stored under `keys`, in the order of `keys`. */
async function readThrottle(
  c: pg.PoolClient,
  keys: readonly string[],
): Promise<Map<string, ThrottleCounter>> {
  const rows = (await c.query<ThrottleRow>(THROTTLE_SQL.read, [keys])).rows;
  const byKey = new Map(rows.map((r) => [r.key, throttleFromRow(r)]));
  const out = new Map<string, ThrottleCounter>();
  for (const k of keys) {
    const v = byKey.get(k);
    if (v) out.set(k, v);
  }
  return out;
}

/**
 * End a client without hanging on a peer that does not answer: after a second its socket
 * is destroyed. Leaves no timer behind.
 */
function endClient(client: pg.Client): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      resolve();
    }, 1_000);
    client
      .end()
      .catch(() => {})
      .finally(() => {
        clearTimeout(timer);
        resolve();
      });
  });
}

/** The password (and secret query parameters) of a connection URL, decoded and raw. */
function secretsOf(url: string): string[] {
  try {
    const u = new URL(url);
    const raw = [u.password, ...['password', 'sslpassword'].map((p) => u.searchParams.get(p) ?? '')].filter(
      (s) => s.length > 0,
    );
    return [...new Set(raw.flatMap((s) => [s, safeDecode(s)]))].filter((s) => s.length >= 3);
  } catch {
    return [];
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Events per INSERT at most; a longer queue is written in several. */
const MAX_BATCH = 500;

const INSERT_EVENTS = `INSERT INTO audit_events (type, time, time_ms, run_id, extension_id, decision, data)
  SELECT type, time, time_ms, run_id, extension_id, decision, data
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS u(type, time, time_ms, run_id, extension_id, decision, data, ord)
  ORDER BY ord RETURNING seq`;

/** Insert rows in order; their seqs, in the same order (the rows are inserted sorted, so the seqs ascend with them). */
async function insertEvents(c: pg.PoolClient, rows: unknown[][]): Promise<number[]> {
  if (rows.length === 1)
    return [Number((await c.query<{ seq: string }>(INSERT_EVENT, rows[0]!)).rows[0]!.seq)];
  const columns = rows[0]!.map((_, i) => rows.map((r) => r[i]));
  const seqs = (await c.query<{ seq: string }>(INSERT_EVENTS, columns)).rows.map((r) => Number(r.seq));
  return seqs.sort((a, b) => a - b);
}

function eventParams(event: StoreEvent): unknown[] {
  const r = eventRow(event);
  return [r.type, r.time, r.time_ms, r.run_id, r.extension_id, r.decision, r.data];
}

/** The PostgreSQL form of an event query: the filters rows.ts checks, positional parameters, the same indexes. */
export function eventQuery(q: EventQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [checkLimit(q.limit)];
  const where: string[] = [];
  const add = (clause: (n: string) => string, value: unknown): void => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (q.runId !== undefined) add((n) => `run_id = ${n}`, q.runId);
  if (q.type !== undefined) {
    const types: readonly string[] = typeof q.type === 'string' ? [q.type] : q.type;
    for (const t of types) {
      if (!STORE_EVENT_TYPES.includes(t as StoreEventType))
        throw brokerError('STORE_INPUT_INVALID', { reason: 'unknown event type' }, { details: { type: t } });
    }
    add((n) => `type = ANY(${n}::text[])`, [...types]);
  }
  if (q.decision !== undefined) {
    if (q.decision !== 'allow' && q.decision !== 'deny')
      throw brokerError(
        'STORE_INPUT_INVALID',
        { reason: 'decision is allow or deny' },
        { details: { decision: q.decision } },
      );
    add((n) => `decision = ${n}`, q.decision);
  }
  if (q.extensionId !== undefined) add((n) => `extension_id = ${n}`, q.extensionId);
  if (q.since !== undefined) add((n) => `time_ms >= ${n}`, toMs('since', q.since));
  if (q.until !== undefined) add((n) => `time_ms < ${n}`, toMs('until', q.until));
  const dir = checkOrder(q.order);
  if (q.after !== undefined)
    add(
      (n) =>
        `(time_ms, seq) ${dir === 'ASC' ? '>' : '<'} (SELECT time_ms, seq FROM audit_events WHERE seq = ${n})`,
      checkSeq(q.after),
    );
  const sql = `SELECT seq, data FROM audit_events${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY time_ms ${dir}, seq ${dir} LIMIT $1`;
  return { sql, params };
}

async function ledgerVersion(c: pg.PoolClient | pg.Client): Promise<number> {
  const exists = (await c.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS ok")).rows[0] as {
    ok: boolean;
  };
  if (!exists.ok) return 0;
  const row = (await c.query('SELECT max(version) AS v FROM schema_migrations')).rows[0] as {
    v: number | null;
  };
  return row.v ?? 0;
}

/**
 * Check the ledger against `migrations` and, when `migrate`, apply the pending ones (the
 * shared loop, migrate.ts): all of them and their ledger rows in one transaction, under an
 * advisory lock so brokers opening at once neither race nor half-migrate. Returns the
 * versions applied now.
 */
function migrateOrCheck(
  c: pg.PoolClient,
  migrations: readonly Migration[],
  migrate: boolean,
  now: () => Date,
): Promise<number[]> {
  return migrateAsync(
    {
      async createLedger() {
        await c.query(CREATE_LEDGER);
        await c.query(LEDGER_ADDITIVE);
      },
      // `additive` is read through the row's JSON: a ledger written before the column existed has none
      async readLedger() {
        if ((await ledgerVersion(c)) === 0) return [];
        return (
          await c.query(
            "SELECT version, checksum, coalesce((to_jsonb(m) ->> 'additive')::boolean, false) AS additive FROM schema_migrations m ORDER BY version",
          )
        ).rows as LedgerRow[];
      },
      async apply(m, at) {
        await c.query(m.sql);
        await c.query(
          'INSERT INTO schema_migrations (version, name, checksum, applied_at, additive) VALUES ($1, $2, $3, $4, $5)',
          [m.version, m.name, migrationChecksum(m), at, m.additive === true],
        );
      },
      async transaction(fn) {
        await c.query('BEGIN');
        try {
          await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
          const out = await fn();
          await c.query('COMMIT');
          return out;
        } catch (err) {
          await c.query('ROLLBACK').catch(() => {});
          if (isBrokerError(err) || isConnectionError(err)) throw err;
          throw new BrokerError('STORE_WRITE_FAILED', {
            message: errorMessage('STORE_WRITE_FAILED', {
              what: 'schema migration failed',
              cause: (err as Error).message,
            }),
          });
        }
      },
    },
    { migrations, migrate, now },
  );
}

/**
 * Open the PostgreSQL store at `url` (postgres://user:password@host:port/db). Checks the
 * schema (STORE_SCHEMA_OUTDATED when behind, STORE_SCHEMA_UNSUPPORTED when ahead or edited),
 * or brings it up to date when `migrate`. STORE_UNAVAILABLE when the server cannot be
 * reached within `reconnectWindowMs`. Errors name the URL with its password removed in `details.store` (the driver's words in `details.storeError`); messages do not, since front doors pass messages to callers and drop those details.
 */
export async function openPostgresStore(
  url: string,
  opts: PostgresStoreOptions = {},
): Promise<PostgresStore & { applied: number[] }> {
  const now = opts.now ?? (() => new Date());
  const where = redactStoreUrl(url);
  let pool: pg.Pool;
  try {
    pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      application_name: 'clibroker',
    });
  } catch {
    // the driver's message may quote the URL
    throw brokerError('STORE_UNAVAILABLE', { badUrl: where }, { details: { store: where } });
  }
  // Idle connections that the server closes (a restart) are reported here; the pool drops them.
  pool.on('error', () => {});
  const store = new PgStore(pool, url, now, opts.reconnectWindowMs ?? 10_000);
  try {
    const applied = await store.migrateWith(opts.migrations ?? PG_MIGRATIONS, opts.migrate === true, now);
    if (opts.retentionDays !== undefined)
      await store.startRetention(checkRetentionDays(opts.retentionDays), opts.onRetentionError ?? (() => {}));
    return Object.assign(store, { applied });
  } catch (err) {
    await store.close();
    throw err;
  }
}
