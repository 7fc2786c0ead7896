/**
 * The embedded store: one better-sqlite3 connection, WAL for files, statements prepared once.
 * better-sqlite3 is an optional peer dependency (it is native code): it loads on the first
 * open, so a host that embeds only the broker installs and runs without it.
 * Every write runs in a BEGIN IMMEDIATE transaction: it takes the write lock before reading,
 * so read-modify-write steps (a tier change and its event, consuming an approval) see the
 * latest commit of any other connection and cannot interleave with it.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { BrokerError, brokerError, errorMessage, isBrokerError } from '../errors.js';
import { driverMissing, loadSqliteDriver, NATIVE_MISSING, sqliteAddonPath } from './driver.js';
import {
  CHAIN_COLUMNS,
  type ChainHead,
  type ChainRow,
  type ChainSource,
  eventHash,
  pruneChain,
} from './chain.js';
import { applyMigrations } from './migrations.js';
import {
  type ApprovalRow,
  approvalFromRow,
  checkDigest,
  checkLimit,
  checkOrder,
  checkText,
  checkTime,
  checkTier,
  CONFORMANCE_COLUMNS,
  type ConformanceRow,
  checkSha256,
  conformanceFromRow,
  conformanceParams,
  checkRetentionDays,
  checkKey,
  checkMs,
  checkTimeout,
  eventFilter,
  type EventRow,
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
  toolArgsJson,
} from './rows.js';
import { callWatchers } from './watchers.js';
import { startRetention } from './retention.js';
import type {
  Approval,
  ApprovalQuery,
  CliTierKey,
  ConformanceVerdict,
  EventQuery,
  NewConformanceVerdict,
  NewApproval,
  PruneEvent,
  PruneInput,
  PruneResult,
  ReviewSessionBounds,
  ReviewSessionRecord,
  SetTierInput,
  SetTierResult,
  Store,
  StoredEvent,
  StoreEvent,
  ThrottleCounter,
  Tier,
  TierChangeEvent,
} from './types.js';

/** How a SQLite store opens its file. */
export interface SqliteStoreOptions {
  /** the clock for created/decided/consumed times and tier events (tests) */
  now?: () => Date;
  /** how long a write waits for another connection's lock; 5 000 ms */
  busyTimeoutMs?: number;
  /**
   * Retention: prune audit events older than this many days when opened and hourly (as
   * `pruneEvents`, by `retention`). Absent: keep forever.
   */
  retentionDays?: number;
  /** hears a failed retention prune (log it); the store keeps working */
  onRetentionError?: (err: unknown) => void;
}

type Stmt = Database.Statement<unknown[], unknown>;

/** Wrap anything that is not already a catalogue error: the transaction rolled back. */
function writeFailed(err: unknown, what: string): never {
  if (isBrokerError(err)) throw err;
  throw new BrokerError('STORE_WRITE_FAILED', {
    message: errorMessage('STORE_WRITE_FAILED', { what, cause: (err as Error)?.message ?? String(err) }),
    cause: err,
  });
}

class SqliteStore implements Store, ChainSource {
  readonly #db: Database.Database;
  readonly #now: () => Date;
  readonly #s: Record<
    | 'getTier'
    | 'putTier'
    | 'insertEvent'
    | 'chainHead'
    | 'advanceChain'
    | 'chainRows'
    | 'runChainRows'
    | 'chainedBefore'
    | 'chainedBetween'
    | 'chainedAfter'
    | 'insertApproval'
    | 'getApproval'
    | 'hold'
    | 'decide'
    | 'consume'
    | 'release'
    | 'insertVerdict'
    | 'latestVerdict'
    | 'countPrunable'
    | 'openGate'
    | 'prune'
    | 'closeGate'
    | 'ping'
    | 'dropSession'
    | 'expireSessions'
    | 'trimReviewer'
    | 'trimOverall'
    | 'insertSession'
    | 'getSession'
    | 'touchSession'
    | 'readThrottle'
    | 'putThrottle'
    | 'forgetThrottle',
    Stmt
  >;
  readonly #where: string;
  readonly #watchers = new Set<(id: string) => void>();
  /** list queries vary by which filters are set; each shape is prepared once, on first use */
  readonly #shapes = new Map<string, Stmt>();
  #closed = false;
  #pruner: NodeJS.Timeout | undefined;

  constructor(db: Database.Database, now: () => Date, where: string) {
    this.#db = db;
    this.#now = now;
    this.#where = where;
    this.#s = {
      getTier: db.prepare(
        'SELECT allow FROM cli_tiers WHERE extension_id = ? AND assignment_id = ? AND cli_id = ?',
      ),
      putTier: db.prepare(
        `INSERT INTO cli_tiers (extension_id, assignment_id, cli_id, allow, updated_at, updated_by) VALUES (@extensionId, @assignmentId, @cliId, @tier, @at, @who)
         ON CONFLICT (extension_id, assignment_id, cli_id) DO UPDATE SET allow = excluded.allow, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
      ),
      insertEvent: db.prepare(
        'INSERT INTO audit_events (seq, type, time, time_ms, run_id, extension_id, decision, data, prev_hash, hash) VALUES (@seq, @type, @time, @time_ms, @run_id, @extension_id, @decision, @data, @prev_hash, @hash)',
      ),
      chainHead: db.prepare('SELECT seq, hash FROM audit_chain WHERE id = 1'),
      advanceChain: db.prepare('UPDATE audit_chain SET seq = @seq, hash = @hash WHERE id = 1'),
      chainRows: db.prepare(
        `SELECT ${CHAIN_COLUMNS} FROM audit_events WHERE seq > @after ORDER BY seq LIMIT @limit`,
      ),
      runChainRows: db.prepare(
        `SELECT ${CHAIN_COLUMNS} FROM audit_events WHERE run_id = @runId AND seq > @after ORDER BY seq LIMIT @limit`,
      ),
      chainedBefore: db.prepare(
        'SELECT max(seq) AS seq FROM audit_events WHERE hash IS NOT NULL AND seq < ?',
      ),
      chainedBetween: db.prepare(
        'SELECT seq FROM audit_events WHERE hash IS NOT NULL AND seq > ? AND seq < ? ORDER BY seq',
      ),
      chainedAfter: db.prepare('SELECT min(seq) AS seq FROM audit_events WHERE hash IS NOT NULL AND seq > ?'),
      insertApproval: db.prepare(
        `INSERT INTO approvals (id, run_id, digest, method, host, path, graphql_operation, body_preview, tool, tool_args, status, created_at)
         VALUES (@id, @runId, @digest, @method, @host, @path, @graphqlOperation, @bodyPreview, @tool, @toolArgs, 'pending', @at) RETURNING *`,
      ),
      getApproval: db.prepare('SELECT * FROM approvals WHERE id = ?'),
      hold: db.prepare(`UPDATE approvals SET held_until = @until WHERE id = @id AND status = 'pending'`),
      decide: db.prepare(
        `UPDATE approvals SET status = @to, decided_at = @at, decided_by = @who WHERE id = @id AND status = 'pending' RETURNING *`,
      ),
      // One statement inside an IMMEDIATE transaction: the select and the update cannot be split by another writer.
      consume: db.prepare(
        `UPDATE approvals SET status = 'consumed', consumed_at = @at
         WHERE rowid = (SELECT rowid FROM approvals WHERE run_id = @runId AND digest = @digest AND status = 'approved' ORDER BY created_at, rowid LIMIT 1)
         RETURNING *`,
      ),
      release: db.prepare(
        `UPDATE approvals SET status = 'approved', consumed_at = NULL WHERE id = @id AND status = 'consumed' RETURNING *`,
      ),
      insertVerdict: db.prepare(
        `INSERT INTO conformance_verdicts (sha256, image, executable, verdict, code, tool, time) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${CONFORMANCE_COLUMNS}`,
      ),
      latestVerdict: db.prepare(
        `SELECT ${CONFORMANCE_COLUMNS} FROM conformance_verdicts WHERE sha256 = ? ORDER BY seq DESC LIMIT 1`,
      ),
      countPrunable: db.prepare(`SELECT count(*) AS n FROM audit_events WHERE ${prunable('@cutoff')}`),
      // the delete trigger lets through only what is below the gate's cutoff (migration 5)
      openGate: db.prepare('INSERT INTO retention_gate (before_ms) VALUES (@cutoff)'),
      prune: db.prepare(`DELETE FROM audit_events WHERE ${prunable('@cutoff')} RETURNING seq, hash`),
      closeGate: db.prepare('DELETE FROM retention_gate'),
      ping: db.prepare('SELECT 1 AS ok'),
      dropSession: db.prepare('DELETE FROM review_sessions WHERE id = ?'),
      expireSessions: db.prepare(
        'DELETE FROM review_sessions WHERE issued_at < @issuedAfter OR last_seen < @seenAfter',
      ),
      // keep the reviewer's newest `keep` (the new one makes it perReviewer), end the rest
      trimReviewer: db.prepare(
        `DELETE FROM review_sessions WHERE id IN (
           SELECT id FROM review_sessions WHERE who = @who ORDER BY issued_at DESC, rowid DESC LIMIT -1 OFFSET @keep)`,
      ),
      trimOverall: db.prepare(
        `DELETE FROM review_sessions WHERE id IN (
           SELECT id FROM review_sessions ORDER BY issued_at DESC, rowid DESC LIMIT -1 OFFSET @keep)`,
      ),
      insertSession: db.prepare(
        'INSERT INTO review_sessions (id, who, issued_at, last_seen) VALUES (@id, @who, @issuedAt, @lastSeen)',
      ),
      getSession: db.prepare('SELECT id, who, issued_at, last_seen FROM review_sessions WHERE id = ?'),
      touchSession: db.prepare(
        'UPDATE review_sessions SET last_seen = @at WHERE id = @id AND last_seen < @at',
      ),
      readThrottle: db.prepare(
        'SELECT key, window_start, failures, last, locked_until, strikes FROM serve_throttle WHERE key IN (SELECT value FROM json_each(?))',
      ),
      putThrottle: db.prepare(
        `INSERT INTO serve_throttle (key, window_start, failures, last, locked_until, strikes)
         VALUES (@key, @window_start, @failures, @last, @locked_until, @strikes)
         ON CONFLICT (key) DO UPDATE SET window_start = excluded.window_start, failures = excluded.failures,
           last = excluded.last, locked_until = excluded.locked_until, strikes = excluded.strikes`,
      ),
      forgetThrottle: db.prepare('DELETE FROM serve_throttle WHERE max(last, locked_until) < ?'),
    };
  }

  #live(): void {
    if (this.#closed) throw new BrokerError('STORE_CLOSED');
  }

  #write<T>(what: string, fn: () => T): T {
    this.#live();
    try {
      return this.#db.transaction(fn).immediate();
    } catch (err) {
      return writeFailed(err, what);
    }
  }

  #shape(key: string, sql: string): Stmt {
    let st = this.#shapes.get(key);
    if (!st) {
      st = this.#db.prepare(sql);
      this.#shapes.set(key, st);
    }
    return st;
  }

  async getAssignmentTier(key: CliTierKey): Promise<Tier> {
    this.#live();
    const row = this.#s.getTier.get(
      checkText('extensionId', key.extensionId),
      checkText('assignmentId', key.assignmentId),
      checkText('cliId', key.cliId),
    ) as { allow: Tier } | undefined;
    return row?.allow ?? 'read';
  }

  async setAssignmentTier(input: SetTierInput): Promise<SetTierResult> {
    const extensionId = checkText('extensionId', input.extensionId);
    const assignmentId = checkText('assignmentId', input.assignmentId);
    const cliId = checkText('cliId', input.cliId);
    const who = checkText('who', input.who);
    const tier = checkTier(input.tier);
    return this.#write('tier change not saved', () => {
      const row = this.#s.getTier.get(extensionId, assignmentId, cliId) as { allow: Tier } | undefined;
      const previous = row?.allow ?? 'read';
      if (previous === tier) return { previous, tier, changed: false };
      const at = this.#now().toISOString();
      this.#s.putTier.run({ extensionId, assignmentId, cliId, tier, at, who });
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
      // Same transaction: if this insert throws, the tier row above is rolled back with it.
      this.#chain(eventRow(event));
      return { previous, tier, changed: true, event };
    });
  }

  async createApproval(a: NewApproval): Promise<Approval> {
    const toolArgs = toolArgsJson(a.toolArgs);
    const params = {
      id: randomUUID(),
      runId: checkText('runId', a.runId),
      digest: checkDigest(a.digest),
      method: checkText('method', a.method),
      host: checkText('host', a.host),
      path: checkText('path', a.path),
      graphqlOperation: a.graphqlOperation ?? null,
      bodyPreview: a.bodyPreview ?? null,
      tool: checkText('tool', a.tool),
      toolArgs,
      at: this.#now().toISOString(),
    };
    return this.#write('approval not recorded', () =>
      approvalFromRow(this.#s.insertApproval.get(params) as ApprovalRow),
    );
  }

  async getApproval(id: string): Promise<Approval | undefined> {
    this.#live();
    const row = this.#s.getApproval.get(id) as ApprovalRow | undefined;
    return row && approvalFromRow(row);
  }

  async listApprovals(q: ApprovalQuery = {}): Promise<Approval[]> {
    this.#live();
    const where: string[] = [];
    const params: Record<string, string | number> = { limit: checkLimit(q.limit) };
    if (q.status !== undefined) {
      where.push('status = @status');
      params['status'] = q.status;
    }
    if (q.runId !== undefined) {
      where.push('run_id = @runId');
      params['runId'] = q.runId;
    }
    const dir = checkOrder(q.order);
    const sql = `SELECT * FROM approvals${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at ${dir}, rowid ${dir} LIMIT @limit`;
    const rows = this.#shape(`approvals:${where.join(',')}|${dir}`, sql).all(params) as ApprovalRow[];
    return rows.map(approvalFromRow);
  }

  approve(id: string, who: string): Promise<Approval> {
    return this.#decide(id, who, 'approved');
  }

  reject(id: string, who: string): Promise<Approval> {
    return this.#decide(id, who, 'rejected');
  }

  async #decide(id: string, who: string, to: 'approved' | 'rejected'): Promise<Approval> {
    checkText('who', who);
    const decided = this.#write(`approval not ${to}`, () => {
      const row = this.#s.decide.get({ id, who, to, at: this.#now().toISOString() }) as
        | ApprovalRow
        | undefined;
      if (row) return approvalFromRow(row);
      const current = this.#s.getApproval.get(id) as ApprovalRow | undefined;
      if (!current) throw new BrokerError('APPROVAL_NOT_FOUND', { details: { id } });
      throw new BrokerError('APPROVAL_NOT_PENDING', { details: { id, status: current.status, wanted: to } });
    });
    // committed: this store object's watchers hear it (SQLite has no cross-process notice)
    callWatchers(this.#watchers, decided.id);
    return decided;
  }

  async consumeApproved(digest: string, runId: string): Promise<Approval | undefined> {
    const params = {
      digest: checkDigest(digest),
      runId: checkText('runId', runId),
      at: this.#now().toISOString(),
    };
    return this.#write('approval not consumed', () => {
      const row = this.#s.consume.get(params) as ApprovalRow | undefined;
      return row && approvalFromRow(row);
    });
  }

  async holdApproval(id: string, until: string | null): Promise<void> {
    const params = { id: checkText('id', id), until: until === null ? null : checkTime('until', until) };
    await this.#write('approval hold not recorded', () => {
      this.#s.hold.run(params);
    });
  }

  async releaseApproval(id: string): Promise<Approval | undefined> {
    const params = { id: checkText('id', id) };
    return this.#write('approval not released', () => {
      const row = this.#s.release.get(params) as ApprovalRow | undefined;
      return row && approvalFromRow(row);
    });
  }

  async appendEvent(event: StoreEvent): Promise<number> {
    const row = eventRow(event);
    return this.#write('audit event not written', () => this.#chain(row));
  }

  async listEvents(q: EventQuery = {}): Promise<StoredEvent[]> {
    this.#live();
    const f = eventFilter(q);
    const rows = this.#shape(`events:${f.shape}`, f.sql).all(f.params) as { seq: number; data: string }[];
    return rows.map((r) => ({ seq: r.seq, event: JSON.parse(r.data) as StoreEvent }));
  }

  async pruneEvents(input: PruneInput): Promise<PruneResult> {
    const { cutoff, before, dryRun, who } = pruneInput(input);
    if (dryRun) {
      this.#live();
      const { n } = this.#s.countPrunable.get({ cutoff }) as { n: number };
      return { events: n, before, dryRun };
    }
    return this.#write('audit events not pruned', () => {
      this.#s.openGate.run({ cutoff });
      const gone = (this.#s.prune.all({ cutoff }) as { seq: number; hash: string | null }[]).sort(
        (a, b) => a.seq - b.seq,
      );
      this.#s.closeGate.run();
      const events = gone.length;
      const chain = this.#pruneChain(gone);
      const event: PruneEvent = {
        type: 'store.events.pruned',
        time: this.#now().toISOString(),
        who: who!,
        before,
        events,
        ...(chain ? { chain } : {}),
      };
      // Same transaction: if this insert throws, the delete above is rolled back with it.
      this.#chain(eventRow(event));
      return { events, before, dryRun, event };
    });
  }

  /**
   * Append `row` to the chain: seq is the head's + 1, the hash covers the head's hash. Only
   * inside a write transaction (IMMEDIATE: no other connection appends meanwhile).
   */
  #chain(row: EventRow): number {
    const head = this.#s.chainHead.get() as ChainHead;
    const seq = head.seq + 1;
    const hash = eventHash(row, seq, head.hash);
    this.#s.insertEvent.run({ ...row, seq, prev_hash: head.hash, hash });
    this.#s.advanceChain.run({ seq, hash });
    return seq;
  }

  /** How the chain crosses what a prune just deleted (chain.ts); inside its transaction. */
  #pruneChain(gone: readonly { seq: number; hash: string | null }[]) {
    if (gone.length === 0) return undefined;
    const first = gone[0]!.seq;
    const last = gone[gone.length - 1]!.seq;
    const own = (this.#s.chainHead.get() as ChainHead).seq + 1;
    const before = (this.#s.chainedBefore.get(first) as { seq: number | null }).seq;
    const between = (this.#s.chainedBetween.all(first, last) as { seq: number }[]).map((r) => r.seq);
    const after = (this.#s.chainedAfter.get(last) as { seq: number | null }).seq;
    const remaining = [...(before === null ? [] : [before]), ...between, ...(after === null ? [] : [after])];
    return pruneChain(gone, remaining, own);
  }

  async chainRows(q: { after: number; limit: number; runId?: string }): Promise<ChainRow[]> {
    this.#live();
    const params = { after: q.after, limit: checkLimit(q.limit) };
    return (
      q.runId === undefined
        ? this.#s.chainRows.all(params)
        : this.#s.runChainRows.all({ ...params, runId: q.runId })
    ) as ChainRow[];
  }

  async chainHead(): Promise<ChainHead> {
    this.#live();
    return this.#s.chainHead.get() as ChainHead;
  }

  /** Prune now and hourly (see retention.ts). */
  startRetention(days: number, onError: (err: unknown) => void): void {
    this.#pruner = startRetention((i) => this.pruneEvents(i), days, this.#now, onError).timer;
  }

  async recordConformance(v: NewConformanceVerdict): Promise<ConformanceVerdict> {
    const params = [...conformanceParams(v), this.#now().toISOString()];
    return this.#write('conformance verdict not recorded', () =>
      conformanceFromRow(this.#s.insertVerdict.get(...params) as ConformanceRow),
    );
  }

  async conformanceFor(sha256: string): Promise<ConformanceVerdict | undefined> {
    this.#live();
    const row = this.#s.latestVerdict.get(checkSha256(sha256)) as ConformanceRow | undefined;
    return row && conformanceFromRow(row);
  }

  async ping(timeoutMs?: number): Promise<void> {
    checkTimeout(timeoutMs, 2_000);
    this.#live();
    // in-process and synchronous: it answers at once or not at all
    try {
      this.#s.ping.get();
    } catch (err) {
      throw brokerError(
        'STORE_UNAVAILABLE',
        { what: 'store ping', why: String((err as Error)?.message ?? err).slice(0, 300) },
        { details: { store: this.#where, inFlight: false } },
      );
    }
  }

  watchApprovals(fn: (id: string) => void): () => void {
    this.#live();
    if (typeof fn !== 'function')
      throw brokerError('STORE_INPUT_INVALID', { reason: 'a watcher is a function' }, { details: {} });
    // a wrapper per call: the same function watching twice is unsubscribed once each
    const entry = (id: string): void => fn(id);
    this.#watchers.add(entry);
    return () => {
      this.#watchers.delete(entry);
    };
  }

  async putReviewSession(session: ReviewSessionRecord, bounds: ReviewSessionBounds): Promise<void> {
    const { session: s, bounds: b } = reviewSessionInput(session, bounds);
    this.#write('review session not recorded', () => {
      // a re-issued id is a new session: its old row goes first and is not counted
      this.#s.dropSession.run(s.id);
      this.#s.expireSessions.run({ issuedAfter: b.issuedAfter, seenAfter: b.seenAfter });
      this.#s.trimReviewer.run({ who: s.who, keep: b.perReviewer - 1 });
      this.#s.trimOverall.run({ keep: b.overall - 1 });
      this.#s.insertSession.run(s);
    });
  }

  async getReviewSession(id: string): Promise<ReviewSessionRecord | undefined> {
    const key = checkKey('id', id);
    this.#live();
    const row = this.#s.getSession.get(key) as ReviewSessionRow | undefined;
    return row && reviewSessionFromRow(row);
  }

  async touchReviewSession(id: string, at: number): Promise<void> {
    const params = { id: checkKey('id', id), at: checkMs('at', at) };
    this.#write('review session not touched', () => this.#s.touchSession.run(params));
  }

  async endReviewSession(id: string): Promise<void> {
    const key = checkKey('id', id);
    this.#write('review session not ended', () => this.#s.dropSession.run(key));
  }

  async throttleCounters(keys: readonly string[]): Promise<Map<string, ThrottleCounter>> {
    const list = throttleKeys(keys);
    this.#live();
    return this.#readThrottle(list);
  }

  #readThrottle(keys: readonly string[]): Map<string, ThrottleCounter> {
    const rows = this.#s.readThrottle.all(JSON.stringify(keys)) as ThrottleRow[];
    const byKey = new Map(rows.map((r) => [r.key, throttleFromRow(r)]));
    // in the order the keys were given
    const out = new Map<string, ThrottleCounter>();
    for (const k of keys) {
      const c = byKey.get(k);
      if (c) out.set(k, c);
    }
    return out;
  }

  async updateThrottle(
    keys: readonly string[],
    fn: (current: Map<string, ThrottleCounter>) => Map<string, ThrottleCounter>,
    forgetBefore: number,
  ): Promise<Map<string, ThrottleCounter>> {
    const list = throttleKeys(keys);
    const forget = checkMs('forgetBefore', forgetBefore);
    // What the callback throws is the caller's error: it is rethrown as it is, not as a write failure.
    let thrown: { err: unknown } | undefined;
    try {
      // IMMEDIATE: the write lock is taken before the read, so no other connection's update
      // of these keys can interleave with this read-modify-write.
      return this.#write('throttle not updated', () => {
        const current = this.#readThrottle(list);
        let out: unknown;
        try {
          out = fn(current);
        } catch (err) {
          thrown = { err };
          throw err;
        }
        for (const row of throttleOutput(list, out)) this.#s.putThrottle.run(row);
        this.#s.forgetThrottle.run(forget);
        return this.#readThrottle(list);
      });
    } catch (err) {
      if (thrown) throw thrown.err;
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#watchers.clear();
    if (this.#pruner) clearInterval(this.#pruner);
    this.#db.close();
  }
}

function openDatabase(path: string, timeout: number): Database.Database {
  const Driver = loadSqliteDriver();
  const nativeBinding = sqliteAddonPath();
  try {
    return new Driver(path, nativeBinding ? { timeout, nativeBinding } : { timeout });
  } catch (err) {
    // The JavaScript half loads without the compiled addon; the first connection finds it missing.
    if (NATIVE_MISSING.test((err as Error)?.message ?? '')) throw driverMissing(err, 'not built');
    return writeFailed(err, `cannot open ${path}`);
  }
}

/**
 * Open (creating if absent) the SQLite store at `path`, or an in-memory one for ':memory:',
 * and migrate it to this build's schema. The parent directory must exist. A file database
 * uses WAL so readers never block the writer; synchronous stays FULL (SQLite's default) so
 * an acknowledged audit event survives a power cut.
 *
 * @throws BrokerError STORE_DRIVER_MISSING when better-sqlite3 is not installed (or not built),
 *   STORE_WRITE_FAILED when the file cannot be opened or migrated, STORE_SCHEMA_UNSUPPORTED
 */
export function openSqliteStore(path: string, opts: SqliteStoreOptions = {}): Store {
  const now = opts.now ?? (() => new Date());
  const days = opts.retentionDays === undefined ? undefined : checkRetentionDays(opts.retentionDays);
  const db = openDatabase(path, opts.busyTimeoutMs ?? 5_000);
  try {
    if (path !== ':memory:' && path !== '') {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new Error(`journal_mode is ${String(mode)}, wanted wal`);
    }
    applyMigrations(db, undefined, now);
    const store = new SqliteStore(db, now, path === '' ? ':memory:' : path);
    // the first prune's work is done synchronously, before the store is handed out
    if (days !== undefined) store.startRetention(days, opts.onRetentionError ?? (() => {}));
    return store;
  } catch (err) {
    db.close();
    return writeFailed(err, `cannot open ${path}`);
  }
}
