/**
 * Hints an agent can apply literally, measured. Every mistake of a generated corpus
 * (fixtures/mistakes.ts) is run through the CLI; when the envelope offers `retry` (the
 * agent's own command corrected), the agent is modelled as running exactly that line:
 * bash splits it into words, and the words run again.
 *
 * - recovered: the retry succeeds, and parses to what the agent meant (exactly, for a
 *   lossless mistake; every value but the one the mistake destroyed, otherwise).
 * - same error: the retry fails with the same type on the same flag. Must never happen.
 * - worse: the retry fails with another error class, or succeeds having changed or dropped
 *   a value the agent got right (a swallowed flag). Must never happen.
 *
 * The bulk runs in-process through the real CLI factory with the bundled definitions, each
 * core function replaced by one that answers with its validated parameters (so a
 * `vendor run` retry does not start a broker); a sample runs through the spawned binary
 * with the real back-ends of the commands that need nothing outside the process.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import t from 'tap';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import type { AnyTool, Envelope, EnvelopeError } from '../../src/cli/types.js';
import { TEST_TOOLS, buildBinary, runCli, spawnBin, testCli } from './fixtures/helpers.js';
import { BASES, type Mistake, meant, mistakes, rng } from './fixtures/mistakes.js';

/** The words bash makes of each line (one bash for all of them): NUL between words, SOH after a line. */
function bashWords(lines: readonly string[]): string[][] {
  if (!lines.length) return [];
  const script = lines.map((l) => `printf '%s\\0' ${l}; printf '\\1\\0'`).join('\n');
  const out = execFileSync('bash', ['-c', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const words = out.split('\0').slice(0, -1);
  const result: string[][] = [[]];
  for (const w of words) {
    if (w === '\x01') result.push([]);
    else result[result.length - 1]!.push(w);
  }
  return result.slice(0, -1);
}

const stub = (d: AnyTool): AnyTool => ({ ...d, run: (p: unknown) => ({ params: p }) });
const cli = testCli([...TEST_TOOLS, ...BUNDLED_TOOLS].map(stub));

type Outcome = 'recovered' | 'no retry' | 'not meant' | 'same error' | 'worse';

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function judge(
  m: Mistake,
  wanted: Record<string, unknown>,
  first: EnvelopeError,
  retried: Envelope | undefined,
): Outcome {
  if (!retried) return 'worse';
  if (!retried.success)
    return retried.error.type === first.type && retried.error.flag === first.flag ? 'same error' : 'worse';
  const got = (retried.data as { params: Record<string, unknown> }).params;
  const keys = new Set([...Object.keys(wanted), ...Object.keys(got)]);
  for (const k of keys) {
    if (k === m.lost) continue;
    // a value the agent got right that changed or vanished: a swallowed flag, or worse
    if (!deepEqual(got[k], wanted[k])) return 'worse';
  }
  if (m.lost !== undefined && got[m.lost] === undefined) return 'not meant';
  return 'recovered';
}

t.test('≥ 99 % of hinted mistakes recover in one literal retry, and none gets worse', async (t) => {
  const corpus = mistakes(Number(process.env['MISTAKES_SEED'] ?? 9));
  // Each property is one assertion, its failing cases listed in it.
  const baseParams = new Map<string, Record<string, unknown>>();
  const basesFailing: string[] = [];
  for (const m of corpus) {
    if (baseParams.has(m.base.name)) continue;
    const r = await runCli(cli, m.base.argv);
    if (!r.env?.success) basesFailing.push(`${m.base.name}: ${r.stdout.slice(0, 200)}`);
    baseParams.set(m.base.name, (r.env as { data?: { params: Record<string, unknown> } }).data?.params ?? {});
  }
  t.same(basesFailing, [], `every base command parses (${baseParams.size} bases)`);
  const firsts: { m: Mistake; error: EnvelopeError }[] = [];
  const parsed: string[] = [];
  for (const m of corpus) {
    const r = await runCli(cli, m.argv);
    if (r.env?.success) {
      parsed.push(`${m.name}: ${m.argv.join(' ')}`);
      continue;
    }
    firsts.push({ m, error: (r.env as { error: EnvelopeError }).error });
  }
  t.same(parsed, [], `every mistake of the corpus is one: none parses (${corpus.length} mistakes)`);
  const withRetry = firsts.filter((f) => f.error.retry !== undefined);
  const words = bashWords(withRetry.map((f) => f.error.retry!));
  const outcomes = new Map<Outcome, string[]>();
  const note = (o: Outcome, what: string) => outcomes.set(o, [...(outcomes.get(o) ?? []), what]);
  let hinted = 0;
  const notClibroker: string[] = [];
  for (const f of firsts) {
    if (f.error.hint === undefined && f.error.retry === undefined) {
      note('no retry', `${f.m.name} (no hint at all)`);
      continue;
    }
    hinted++;
    if (f.error.retry === undefined) {
      note('no retry', `${f.m.name}: ${f.error.type} — ${f.error.hint}`);
      continue;
    }
    const w = words[withRetry.indexOf(f)]!;
    if (w[0] !== 'clibroker') notClibroker.push(`${f.m.name}: ${f.error.retry}`);
    const r = await runCli(cli, w.slice(1));
    const o = judge(f.m, meant(f.m, baseParams.get(f.m.base.name)!), f.error, r.env);
    note(o, `${f.m.name}: ${f.error.retry}${o === 'recovered' ? '' : ` → ${r.stdout.slice(0, 300)}`}`);
  }
  const count = (o: Outcome) => outcomes.get(o)?.length ?? 0;
  const rate = count('recovered') / hinted;
  const line = `literal-retry recovery: ${count('recovered')}/${hinted} hinted mistakes = ${(rate * 100).toFixed(1)} % (corpus ${corpus.length}; no retry offered ${count('no retry')}, retry not what was meant ${count('not meant')}, same error ${count('same error')}, worse ${count('worse')})`;
  t.comment(line);
  console.log(line);
  for (const o of ['no retry', 'not meant', 'same error', 'worse'] as const)
    for (const s of outcomes.get(o) ?? []) t.comment(`${o}: ${s}`);
  t.same(notClibroker, [], `every retry is a clibroker command line (${withRetry.length} retries)`);
  t.ok(corpus.length >= 300, `the corpus has several hundred mistakes (${corpus.length})`);
  t.ok(hinted / firsts.length >= 0.97, `nearly every mistake gets a hint (${hinted}/${firsts.length})`);
  t.ok(rate >= 0.99, line);
  t.equal(count('same error'), 0, 'no retry brings the same error back');
  t.equal(
    count('worse'),
    0,
    'no retry makes things worse (another error class, a swallowed flag, a changed value)',
  );
});

t.test(
  'through the spawned binary with real back-ends: the retry answers like the intended command',
  async (t) => {
    const { bin } = await buildBinary();
    t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));
    const real = new Set([
      'classify GET',
      'classify with overrides',
      'validate cli manifest',
      'agent manifest',
    ]);
    const sample = mistakes()
      .filter((m) => real.has(m.base.name) && m.lossless)
      .filter((_, i) => i % 6 === 0);
    t.ok(sample.length >= 12, `${sample.length} mistakes sampled`);
    const wantData = new Map<string, unknown>();
    const firsts = sample.map((m) => {
      if (!wantData.has(m.base.name))
        wantData.set(m.base.name, (spawnBin(bin, m.base.argv).env as { data: unknown }).data);
      return { m, r: spawnBin(bin, m.argv) };
    });
    const retried = firsts.filter((f) => f.r.env?.success === false && f.r.env.error.retry);
    const words = bashWords(retried.map((f) => (f.r.env as { error: EnvelopeError }).error.retry!));
    let recovered = 0;
    const long: string[] = [];
    for (const [i, f] of retried.entries()) {
      const again = spawnBin(bin, words[i]!.slice(1));
      if (again.env?.success && deepEqual(again.env.data, wantData.get(f.m.base.name))) recovered++;
      else t.comment(`not recovered: ${f.m.name}: ${again.stdout.slice(0, 300)}`);
      if (again.stderr.length > 2000) long.push(`${f.m.name}: ${again.stderr.length} characters`);
    }
    t.same(long, [], `every retry's stderr stays short (${retried.length} retries)`);
    const line = `spawned sample: ${recovered}/${firsts.length} recovered in one literal retry (${retried.length} offered a retry)`;
    t.comment(line);
    t.ok(recovered / firsts.length >= 0.99, line);
  },
);

/** With seed 2026 the fuzz makes 576 distinct mutants, 335 offered a retry, of 98 error kinds. */
const FLOOR = { DISTINCT: 500, RETRIED: 250, KINDS: 60 };

t.test('fuzz: whatever the mistake, a retry never brings the same error back', async (t) => {
  const r = rng(2026);
  const chars = [...'{}[]"\',:-= \n\tax1é'];
  const mutants: string[][] = [];
  for (let n = 0; n < 600; n++) {
    const base = BASES[Math.floor(r() * BASES.length)]!.argv;
    const a = [...base];
    for (let k = 0; k < 1 + Math.floor(r() * 3); k++) {
      const i = Math.floor(r() * a.length);
      const op = Math.floor(r() * 5);
      const w = a[i]!;
      const at = Math.floor(r() * (w.length + 1));
      if (op === 0) a.splice(i, 1);
      else if (op === 1 && i + 1 < a.length) [a[i], a[i + 1]] = [a[i + 1]!, a[i]!];
      else if (op === 2) a[i] = w.slice(0, at) + chars[Math.floor(r() * chars.length)] + w.slice(at);
      else if (op === 3) a[i] = w.slice(0, at) + w.slice(at + 1);
      else a.splice(i, 0, a[Math.floor(r() * a.length)]!);
    }
    mutants.push(a);
  }
  const firsts: { argv: string[]; error: EnvelopeError }[] = [];
  for (const argv of mutants) {
    const res = await runCli(cli, argv);
    if (res.env && !res.env.success && res.env.error.retry) firsts.push({ argv, error: res.env.error });
  }
  const words = bashWords(firsts.map((f) => f.error.retry!));
  let same = 0;
  for (const [i, f] of firsts.entries()) {
    const again = await runCli(cli, words[i]!.slice(1));
    if (
      again.env &&
      !again.env.success &&
      again.env.error.type === f.error.type &&
      again.env.error.flag === f.error.flag
    ) {
      same++;
      t.comment(`same error: ${f.argv.join(' ')} → ${f.error.retry}`);
    }
  }
  // A floor on what the fuzz exercised, measured here: a generator that stopped mutating, or a
  // CLI that stopped offering retries, would otherwise pass with nothing checked.
  const distinct = new Set(mutants.map((a) => JSON.stringify(a))).size;
  const retried = new Set(firsts.map((f) => JSON.stringify(f.argv))).size;
  const kinds = new Set(firsts.map((f) => `${f.error.type} ${f.error.flag ?? ''}`)).size;
  const line = `fuzz: ${distinct} distinct of ${mutants.length} mutants, ${retried} distinct offered a retry, ${kinds} distinct errors (type and flag) retried; ${same} brought the same error back`;
  t.comment(line);
  t.equal(same, 0, 'no retry brings the same error back');
  t.ok(
    distinct >= FLOOR.DISTINCT && retried >= FLOOR.RETRIED && kinds >= FLOOR.KINDS,
    `the fuzz exercised at least ${FLOOR.DISTINCT} distinct mutants, ${FLOOR.RETRIED} retries, ${FLOOR.KINDS} error kinds: ${line}`,
  );
});
