/** A conformance report as a text table: the verdict, then one line per check in order. */
import type { ConformanceReport } from './types.js';

/** The report as a plain-text table, one line per check. */
export function conformanceTable(r: ConformanceReport): string {
  const head = r.verdict === 'pass' ? `${r.cli}: pass` : `${r.cli}: refused (${r.reason})`;
  const decided = r.checks.findIndex((c) => !c.ok);
  const rows = r.checks.map((c, i) => [
    String(i + 1),
    c.name,
    c.ok ? 'ok' : i === decided ? 'FAIL' : c.notReached ? '-' : 'fail',
    c.ok ? '' : c.code,
    c.evidence,
  ]);
  const widths = [0, 1, 2, 3].map((k) =>
    Math.max(...rows.map((row) => row[k]!.length), ['#', 'check', 'ok', 'code'][k]!.length),
  );
  const line = (cells: string[]): string =>
    cells
      .map((c, k) => (k < 4 ? c.padEnd(widths[k]!) : c))
      .join('  ')
      .trimEnd();
  return [head, '', line(['#', 'check', 'ok', 'code', 'evidence']), ...rows.map(line)].join('\n');
}
