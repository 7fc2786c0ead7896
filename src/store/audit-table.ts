/**
 * The audit trail as a readable text table (the demo, `audit query --format table`). Pure:
 * it reads stored events and imports nothing.
 */
import type { StoredEvent, TierChangeEvent } from './types.js';

const HEADER = ['seq', 'event', 'run', 'method', 'host', 'path', 'class', 'decision', 'status', 'detail'];

/** One row per event; `run` is the first 8 characters of the run id. */
export function auditRows(events: readonly StoredEvent[]): string[][] {
  return events.map(({ seq, event: e }) => {
    const head = [String(seq), e.type];
    if (e.type === 'egress.allowed' || e.type === 'egress.blocked') {
      const run = (e.labels?.['runId'] ?? '').slice(0, 8);
      return [
        ...head,
        run,
        e.method,
        e.host,
        e.path,
        e.class ?? '-',
        e.decision,
        String(e.status ?? '-'),
        e.policyCode ?? e.code ?? '',
      ];
    }
    if (e.type === 'extension.execution.succeeded' || e.type === 'extension.execution.failed') {
      const detail = [
        `tier ${e.cliTier} (${e.cliTierReason})`,
        e.exitCode === undefined ? '' : `exit ${e.exitCode}`,
        e.code ?? '',
      ]
        .filter(Boolean)
        .join(', ');
      return [...head, e.runId.slice(0, 8), '', '', '', '', '', '', detail];
    }
    const c = e as TierChangeEvent;
    return [
      ...head,
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      `${c.who}: ${c.previous} → ${c.new} (${c.extensionId}/${c.assignmentId})`,
    ];
  });
}

/** The rows under a header, columns padded, ending in a newline. */
export function auditTable(events: readonly StoredEvent[]): string {
  const rows = auditRows(events);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: readonly string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return `${[fmt(HEADER), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(fmt)].join('\n')}\n`;
}
