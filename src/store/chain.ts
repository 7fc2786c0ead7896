/**
 * The audit trail's hash chain (docs/audit.md): every stored event carries the hash of the
 * event before it and its own hash over a canonical encoding, so an edited, deleted or
 * reordered event breaks the chain at a seq that `verifyChain` names.
 *
 * The canonical encoding of an event is the JSON object of its stored columns plus `seq`
 * and `prev`, keys in code-point order, no whitespace, strings escaped as `JSON.stringify`
 * escapes them, integers in decimal, absent values as `null`:
 *
 *   {"data":…,"decision":…,"extension_id":…,"prev":…,"run_id":…,"seq":…,"time":…,"time_ms":…,"type":…}
 *
 * and its hash is the lower-case hex sha256 of that text's UTF-8 bytes. `data` is the
 * event's JSON exactly as stored, hashed as a string (no re-encoding of the event itself).
 * SQLite computes it here; PostgreSQL in its insert trigger (pg-migrations.ts), byte for
 * byte the same, so a chain verifies the same wherever it was written.
 *
 * Nothing here is exported from the package: the chain is read through `ChainSource`, which
 * both stores implement beside the public `Store` contract.
 */
import { createHash } from 'node:crypto';
import { MAX_LIMIT } from './rows.js';
import type { PruneEvent, Store } from './types.js';

/** What a prune records of the chain (`PruneEvent.chain`). */
export type PruneChain = NonNullable<PruneEvent['chain']>;

/** An audit event as stored, with its place in the chain. */
export interface ChainRow {
  seq: number;
  type: string;
  time: string;
  time_ms: number;
  run_id: string | null;
  extension_id: string | null;
  decision: string | null;
  /** the event's JSON, as stored */
  data: string;
  /** the previous event's hash; null for the first chained event */
  prev_hash: string | null;
  /** null for an event stored before the chain existed */
  hash: string | null;
}

/** The last seq the chain assigned and that event's hash. */
export interface ChainHead {
  seq: number;
  hash: string | null;
}

/** Read access to the chain; both stores implement it. */
export interface ChainSource {
  /** rows in seq order after `after` (0: from the start), at most `limit`; only `runId`'s when set */
  chainRows(q: { after: number; limit: number; runId?: string }): Promise<ChainRow[]>;
  chainHead(): Promise<ChainHead>;
}

export function isChainSource(store: object): store is ChainSource {
  const s = store as Partial<ChainSource>;
  return typeof s.chainRows === 'function' && typeof s.chainHead === 'function';
}

/** The columns a chain row is read with, in the order of `ChainRow`. */
export const CHAIN_COLUMNS =
  'seq, type, time, time_ms, run_id, extension_id, decision, data, prev_hash, hash';

type Hashed = Omit<ChainRow, 'seq' | 'prev_hash' | 'hash'>;

/** The canonical encoding of `row` stored at `seq` after an event whose hash is `prev`. */
export function canonicalEvent(row: Hashed, seq: number, prev: string | null): string {
  // keys written in sorted order: JSON.stringify keeps insertion order for non-numeric keys
  return JSON.stringify({
    data: row.data,
    decision: row.decision ?? null,
    extension_id: row.extension_id ?? null,
    prev,
    run_id: row.run_id ?? null,
    seq,
    time: row.time,
    time_ms: Number(row.time_ms),
    type: row.type,
  });
}

/** The chain hash of `row` at `seq` after `prev`. */
export function eventHash(row: Hashed, seq: number, prev: string | null): string {
  return createHash('sha256')
    .update(canonicalEvent(row, seq, prev), 'utf8')
    .digest('hex');
}

/**
 * The `chain` record of a prune from what it deleted (ascending seqs, each with its hash),
 * the chained seqs left around them (ascending: the one before the first deleted, any kept
 * between, and the one after the last), and the prune event's own seq (it follows the
 * last one when nothing newer is left). Undefined when nothing was deleted.
 */
export function pruneChain(
  deleted: readonly { seq: number; hash: string | null }[],
  remaining: readonly number[],
  ownSeq: number,
): PruneChain | undefined {
  const last = deleted[deleted.length - 1];
  if (!last) return undefined;
  const first = deleted[0]!.seq;
  const around = remaining.includes(ownSeq) ? [...remaining] : [...remaining, ownSeq];
  const gaps: [number, number][] = [];
  for (let i = 1; i < around.length; i++) {
    const a = around[i - 1]!;
    const b = around[i]!;
    if (b > a + 1 && deletedBetween(deleted, a, b)) gaps.push([a, b]);
  }
  const out: PruneChain = { lastPrunedSeq: last.seq, lastPrunedHash: last.hash };
  if (around[0]! > first) out.start = around[0]!;
  if (gaps.length > 0) out.gaps = gaps;
  return out;
}

/** Is some deleted seq strictly between a and b? (binary search: `deleted` is ascending) */
function deletedBetween(deleted: readonly { seq: number }[], a: number, b: number): boolean {
  let lo = 0;
  let hi = deleted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (deleted[mid]!.seq <= a) lo = mid + 1;
    else hi = mid;
  }
  return lo < deleted.length && deleted[lo]!.seq < b;
}

/** What broke: the row was changed, events before it are missing, rows were moved, or an event was stored outside the chain. */
export type ChainBreakKind = 'edited' | 'deleted' | 'reordered' | 'unchained' | 'truncated';

export interface ChainBreak {
  ok: false;
  /** the seq at which the chain breaks */
  seq: number;
  kind: ChainBreakKind;
  /** the chained event before it, when there is one */
  after?: number;
  /** one sentence for people */
  detail: string;
  /** chained events that verified before the break */
  events: number;
}

export interface ChainOk {
  ok: true;
  /** chained events verified */
  events: number;
  /** events stored before the chain existed (not verified) */
  unchained: number;
  /** the first and last chained seq; absent when there are none */
  first?: number;
  last?: number;
  /** the last chained event's hash: keep it elsewhere to check this trail against later */
  head: string | null;
}

export type ChainResult = ChainOk | ChainBreak;

/** What the prunes recorded: the starts and gaps they explain. */
export interface PruneExcuses {
  starts: Set<number>;
  gaps: Set<string>;
}

/** Collect what prune events record; pass every `store.events.pruned` event's data. */
export function pruneExcuses(pruneEvents: readonly { chain?: PruneChain }[]): PruneExcuses {
  const out: PruneExcuses = { starts: new Set(), gaps: new Set() };
  for (const e of pruneEvents) {
    if (e.chain?.start !== undefined) out.starts.add(e.chain.start);
    for (const [a, b] of e.chain?.gaps ?? []) out.gaps.add(`${a}:${b}`);
  }
  return out;
}

/**
 * Walks the chain in seq order: `push` every row, then `end` with the store's head. Stops at
 * the first break. Rows before the first chained one were stored before the chain existed
 * and are counted, not checked. The first chained event must name no previous hash, unless
 * a prune recorded it as the chain's new start; a later one must name the hash of the chained
 * event before it, unless a prune recorded the gap between them.
 */
export class ChainWalker {
  readonly #excuses: PruneExcuses;
  #prev: ChainRow | undefined;
  #first: number | undefined;
  #events = 0;
  #unchained = 0;
  #broken: ChainBreak | undefined;

  constructor(excuses: PruneExcuses) {
    this.#excuses = excuses;
  }

  get broken(): ChainBreak | undefined {
    return this.#broken;
  }

  #break(seq: number, kind: ChainBreakKind, detail: string): void {
    const after = this.#prev?.seq;
    this.#broken = {
      ok: false,
      seq,
      kind,
      ...(after !== undefined ? { after } : {}),
      detail,
      events: this.#events,
    };
  }

  /** Check one row; false once the chain is broken (stop reading). */
  push(row: ChainRow): boolean {
    if (this.#broken) return false;
    const prev = this.#prev;
    if (row.hash === null) {
      if (!prev) {
        this.#unchained++;
        return true;
      }
      this.#break(row.seq, 'unchained', `event ${row.seq} has no hash but follows chained event ${prev.seq}`);
      return false;
    }
    if (!prev) {
      if (row.prev_hash !== null && !this.#excuses.starts.has(row.seq)) {
        this.#break(
          row.seq,
          'deleted',
          `the first chained event (${row.seq}) names a previous event that is missing, and no prune recorded it`,
        );
        return false;
      }
    } else if (row.prev_hash !== prev.hash && !this.#excuses.gaps.has(`${prev.seq}:${row.seq}`)) {
      if (row.seq > prev.seq + 1)
        this.#break(
          row.seq,
          'deleted',
          `events ${prev.seq + 1}..${row.seq - 1} are missing and no prune recorded deleting them`,
        );
      else
        this.#break(
          row.seq,
          'reordered',
          `event ${row.seq} does not name event ${prev.seq}'s hash as its previous`,
        );
      return false;
    }
    if (eventHash(row, row.seq, row.prev_hash) !== row.hash) {
      this.#break(row.seq, 'edited', `event ${row.seq} does not match its hash`);
      return false;
    }
    this.#first ??= row.seq;
    this.#prev = row;
    this.#events++;
    return true;
  }

  /** The verdict, checking the last event against the store's head. */
  end(head: ChainHead): ChainResult {
    if (this.#broken) return this.#broken;
    const last = this.#prev;
    if (last && head.seq > last.seq) {
      this.#break(head.seq, 'truncated', `events ${last.seq + 1}..${head.seq} were appended and are missing`);
      return this.#broken!;
    }
    if (last && head.hash !== last.hash) {
      this.#break(
        last.seq,
        'edited',
        `the last event (${last.seq}) does not match the chain's recorded head`,
      );
      return this.#broken!;
    }
    if (!last && head.hash !== null) {
      this.#break(
        head.seq,
        'truncated',
        `the chain's head names event ${head.seq} and no chained event is left`,
      );
      return this.#broken!;
    }
    return {
      ok: true,
      events: this.#events,
      unchained: this.#unchained,
      ...(this.#first !== undefined ? { first: this.#first, last: last!.seq } : {}),
      head: last?.hash ?? null,
    };
  }
}

/** Events read per page while verifying. */
export const VERIFY_PAGE = 1_000;

/**
 * Verify the whole chain of `source`: the prunes' records first (`prunes`: every prune
 * event's data), then every row in seq order, then the head.
 */
export async function verifyChain(
  source: ChainSource,
  prunes: readonly { chain?: PruneChain }[],
): Promise<ChainResult> {
  const walker = new ChainWalker(pruneExcuses(prunes));
  // the head first: an append during the walk then lies beyond it and is not expected
  const head = await source.chainHead();
  let after = 0;
  for (;;) {
    const rows = await source.chainRows({ after, limit: VERIFY_PAGE });
    for (const row of rows) {
      if (row.seq > head.seq) return walker.end(head);
      if (!walker.push(row)) return walker.broken!;
    }
    if (rows.length < VERIFY_PAGE) break;
    after = rows[rows.length - 1]!.seq;
  }
  return walker.end(head);
}

/** Verify the chain of a store: its prune events' records, read through `listEvents`, then every row. */
export async function verifyStore(store: Store & ChainSource): Promise<ChainResult> {
  const prunes: PruneEvent[] = [];
  let after: number | undefined;
  for (;;) {
    const page = await store.listEvents({
      type: 'store.events.pruned',
      limit: MAX_LIMIT,
      ...(after !== undefined ? { after } : {}),
    });
    for (const p of page) prunes.push(p.event as PruneEvent);
    if (page.length < MAX_LIMIT) break;
    after = page[page.length - 1]!.seq;
  }
  return verifyChain(store, prunes);
}
