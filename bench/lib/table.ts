/**
 * Rows of the result table: each figure beside the baseline measured in the same run,
 * with its goal and verdict.
 * Path figures compare with direct; proxy-process figures (CPU, RSS) with the plain tunnel.
 */
import type { Figures, Goal, MetricDef, Scenario } from '../scenarios/types.js';

export interface Row {
  scenario: string;
  metric: string;
  unit: string;
  path: string;
  value?: number;
  /** why there is no value (skipped peer, n/a, error) */
  note?: string;
  baseline?: string;
  ratio?: number;
  added?: number;
  goal?: string;
  pass?: boolean;
}

export type Results = Record<string, Record<string, Figures | { error: string } | { skipped: string }>>;

const fmt = (v: number, digits: number): string =>
  v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function goalText(g: Goal, m: MetricDef): string {
  const op = g.op === '<=' ? '≤' : '≥';
  if (g.on === 'ratio') return `${op} ${g.target}× ${g.vs ?? (m.proxyOnly ? 'connect-tunnel' : 'direct')}`;
  if (g.on === 'added') return `${op} +${g.target} ${m.unit} vs direct`;
  return `${op} ${g.target} ${m.unit}`;
}

/** `v` over another path's same figure in the same run, when that path has one. */
function ratioTo(
  results: Results,
  scenario: string,
  path: string,
  key: string,
  v: number,
): number | undefined {
  const other = figureOf(results, scenario, path, key);
  return other ? v / other : undefined;
}

function figureOf(results: Results, scenario: string, path: string, key: string): number | undefined {
  const r = results[scenario]?.[path];
  return r && !('error' in r) && !('skipped' in r) ? (r as Figures)[key] : undefined;
}

export function buildRows(scenarios: readonly Scenario[], paths: readonly string[], results: Results): Row[] {
  const rows: Row[] = [];
  for (const s of scenarios) {
    for (const m of s.metrics) {
      const baseline = m.proxyOnly ? 'connect-tunnel' : 'direct';
      const base = results[s.id]?.[baseline];
      const baseValue =
        base && !('error' in base) && !('skipped' in base) ? (base as Figures)[m.key] : undefined;
      for (const path of paths) {
        // A scenario that does not apply to a path (S5 for the peers) gets no row.
        if (s.paths && !s.paths.includes(path)) continue;
        if (m.paths && !m.paths.includes(path)) continue;
        const row: Row = { scenario: s.id, metric: m.label, unit: m.unit, path };
        const r = results[s.id]?.[path];
        if (m.proxyOnly && path === 'direct') row.note = '—';
        else if (!r) row.note = 'not run';
        else if ('skipped' in r) row.note = r.skipped as string;
        else if ('error' in r) row.note = `error: ${String(r.error).split('\n')[0]!.slice(0, 80)}`;
        else if (r[m.key] === undefined) row.note = '—';
        else {
          const v = r[m.key]!;
          row.value = v;
          if (baseValue !== undefined && path !== baseline) {
            row.baseline = baseline;
            row.ratio = v / baseValue;
            row.added = v - baseValue;
          }
          const budget = m.goal?.budget?.((p, k) => figureOf(results, s.id, p, k));
          if (m.goal?.budget && path === 'clibroker') {
            row.goal = budget
              ? `≤ ${budget.text} = ${fmt(budget.target, m.digits)} ${m.unit}`
              : 'a figure is missing';
            if (budget) row.pass = v <= budget.target;
          } else if (
            m.goal &&
            !m.goal.budget &&
            path !== 'direct' &&
            path !== m.goal.vs &&
            !(m.goal.on === 'ratio' && path === baseline)
          ) {
            row.goal = goalText(m.goal, m);
            const x =
              m.goal.on === 'value'
                ? v
                : m.goal.on === 'ratio'
                  ? m.goal.vs !== undefined
                    ? ratioTo(results, s.id, m.goal.vs, m.key, v)
                    : row.ratio
                  : row.added;
            if (x !== undefined) row.pass = m.goal.op === '<=' ? x <= m.goal.target : x >= m.goal.target;
            else if (m.goal.vs !== undefined) row.goal += ` (no ${m.goal.vs} in this run)`;
          }
        }
        rows.push(row);
      }
    }
  }
  return rows;
}

export function renderTable(scenarios: readonly Scenario[], rows: readonly Row[]): string {
  const digits = new Map(
    scenarios.flatMap((s) => s.metrics.map((m) => [`${s.id}/${m.label}`, m.digits] as const)),
  );
  const header = ['Scenario', 'Metric', 'Path', 'Measured', 'vs baseline', 'Goal', 'Result'];
  const body = rows.map((r) => {
    const d = digits.get(`${r.scenario}/${r.metric}`) ?? 1;
    const measured = r.value === undefined ? (r.note ?? '') : `${fmt(r.value, d)} ${r.unit}`;
    let vs = '';
    if (r.ratio !== undefined) {
      const sign = r.added! >= 0 ? '+' : '−';
      vs =
        r.unit === 'µs' || r.unit === 'ms'
          ? `${sign}${fmt(Math.abs(r.added!), d)} ${r.unit} (×${fmt(r.ratio, 2)})`
          : `×${fmt(r.ratio, 2)}`;
      if (r.baseline !== 'direct') vs += ` vs ${r.baseline}`;
    }
    return [
      r.scenario,
      r.metric,
      r.path,
      measured,
      vs,
      r.goal ?? '',
      r.pass === undefined ? '' : r.pass ? 'pass' : 'FAIL',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string =>
    `| ${cells.map((c, i) => (i >= 3 && i <= 4 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((w, i) => (i >= 3 && i <= 4 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`,
    ...body.map(line),
  ].join('\n');
}
