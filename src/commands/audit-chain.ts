/**
 * The back-ends of `audit verify`, `audit receipt` and `audit export` (loaded only when one
 * runs): the store's hash chain walked, one run's events and approvals gathered into its
 * receipt, or the trail written as OCSF or OTLP JSON lines.
 */
import { writeFileSync } from 'node:fs';
import { BrokerError, brokerError } from '../errors.js';
import { type ChainOk, type ChainRow, type ChainSource, isChainSource, verifyStore } from '../store/chain.js';
import { type ExportFormat, exportLine } from '../store/export.js';
import { buildReceipt, type Receipt } from '../store/receipt.js';
import { MAX_LIMIT } from '../store/rows.js';
import type { Store } from '../store/types.js';
import { storeFlag, withStore } from './store-flag.js';

function chained(store: Store): Store & ChainSource {
  // both stores are chain sources; a store that is not cannot be verified, which is our bug
  if (!isChainSource(store))
    throw new BrokerError('INTERNAL_ERROR', { message: 'the store keeps no hash chain' });
  return store;
}

/** Walk the chain; AUDIT_CHAIN_BROKEN (exit 1) at the first break. */
export async function verifyCommand(p: { store?: string; config?: string }): Promise<ChainOk> {
  const result = await withStore(storeFlag(p), false, (s) => verifyStore(chained(s)));
  if (result.ok) return result;
  throw brokerError(
    'AUDIT_CHAIN_BROKEN',
    { seq: result.seq, kind: result.kind, detail: result.detail },
    {
      details: {
        seq: result.seq,
        kind: result.kind,
        ...(result.after !== undefined ? { after: result.after } : {}),
        verified: result.events,
      },
    },
  );
}

/** The receipt of one run; AUDIT_RUN_NOT_FOUND when the store holds none of its events. */
export async function receiptCommand(p: { run: string; store?: string; config?: string }): Promise<Receipt> {
  const receipt = await withStore(storeFlag(p), false, async (s) => {
    const store = chained(s);
    // the head first: every event read below is at or before it, or appended since
    const head = await store.chainHead();
    const rows: ChainRow[] = [];
    for (let after = 0; ; ) {
      const page = await store.chainRows({ after, limit: MAX_LIMIT, runId: p.run });
      rows.push(...page);
      if (page.length < MAX_LIMIT) break;
      after = page[page.length - 1]!.seq;
    }
    const approvals = await store.listApprovals({ runId: p.run, limit: MAX_LIMIT });
    return buildReceipt(p.run, rows, approvals, head);
  });
  if (!receipt) throw brokerError('AUDIT_RUN_NOT_FOUND', { runId: p.run }, { details: { runId: p.run } });
  return receipt;
}

/** What `audit export` takes: the format, optional filters, and where to write. */
export interface ExportParams {
  format: ExportFormat;
  run?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  out?: string | undefined;
  store?: string | undefined;
  config?: string | undefined;
}

/**
 * Every event (of `run`, with time in [since, until)) in seq order, one JSON line each: to
 * `out` (created or replaced, mode 0600: the trail is the operator's), else in the answer.
 */
export async function exportCommand(
  p: ExportParams,
): Promise<{ format: ExportFormat; events: number; file?: string; jsonl?: string }> {
  const since = p.since === undefined ? undefined : Date.parse(p.since);
  const until = p.until === undefined ? undefined : Date.parse(p.until);
  const lines = await withStore(storeFlag(p), false, async (s) => {
    const store = chained(s);
    const out: string[] = [];
    for (let after = 0; ; ) {
      const page = await store.chainRows({ after, limit: MAX_LIMIT, ...(p.run ? { runId: p.run } : {}) });
      for (const row of page) {
        if (since !== undefined && row.time_ms < since) continue;
        if (until !== undefined && row.time_ms >= until) continue;
        out.push(exportLine(row, p.format));
      }
      if (page.length < MAX_LIMIT) break;
      after = page[page.length - 1]!.seq;
    }
    return out;
  });
  const jsonl = lines.map((l) => `${l}\n`).join('');
  if (p.out === undefined) return { format: p.format, events: lines.length, jsonl };
  writeFileSync(p.out, jsonl, { mode: 0o600 });
  return { format: p.format, events: lines.length, file: p.out };
}
