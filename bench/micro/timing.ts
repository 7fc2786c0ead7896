/**
 * Tiny timing helpers for the micro benches: median of batch means (robust to a noisy,
 * shared 2-core box), heap measurement with an exposed GC, and undici-style result tables.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
/** A callable GC even when node was started without --expose-gc. */
export const gc: () => void = runInNewContext('gc');

/** Median nanoseconds per call: `rounds` batches of `batch` calls after a warm-up. */
export function timeNs(fn: () => unknown, batch: number, rounds: number): number {
  for (let i = 0; i < Math.min(batch * 2, 2000); i++) fn();
  const means: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) fn();
    means.push(Number(process.hrtime.bigint() - t0) / batch);
  }
  means.sort((a, b) => a - b);
  return means[Math.floor(means.length / 2)]!;
}

/**
 * Median nanoseconds of single calls, each after a full GC: for multi-MiB inputs, where a
 * batch would mostly measure the collection of the previous calls' garbage.
 */
export function timeEachNs(fn: () => unknown, calls: number): number {
  fn();
  const ts: number[] = [];
  for (let i = 0; i < calls; i++) {
    gc();
    const t0 = process.hrtime.bigint();
    fn();
    ts.push(Number(process.hrtime.bigint() - t0));
  }
  ts.sort((a, b) => a - b);
  return ts[Math.floor(ts.length / 2)]!;
}

/**
 * Heap used right after one call, relative to a collected heap before it, and what is
 * still retained after a GC while the result is held. The first is an upper bound of the
 * growth unless a GC ran during the call.
 */
export function heapOf(fn: () => unknown): { grownBytes: number; retainedBytes: number } {
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const keep = fn();
  const grownBytes = process.memoryUsage().heapUsed - before;
  gc();
  const retainedBytes = process.memoryUsage().heapUsed - before;
  if (keep === Symbol.for('never')) console.log(keep);
  return { grownBytes, retainedBytes };
}

export function fmtNs(ns: number): string {
  if (ns < 1_000) return `${ns.toFixed(0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(2)} µs`;
  return `${(ns / 1_000_000).toFixed(2)} ms`;
}

export function fmtBytes(b: number): string {
  return `${(b / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Print rows as an aligned table. */
export function table(rows: Record<string, string>[]): void {
  if (rows.length === 0) return;
  const keys = Object.keys(rows[0]!);
  const width = keys.map((k) => Math.max(k.length, ...rows.map((r) => (r[k] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i]!)).join(' | ')} |`;
  console.log(line(keys));
  console.log(`|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(keys.map((k) => r[k] ?? '')));
}
