/**
 * A hand-written corpus of agent mistakes (fixtures/agent-corpus.ts), independent of the
 * generated one, run through the spawned binary with real back-ends (`vendor run` with real
 * curl against the embedded mock vendor). For every mistake:
 *
 * 1. the answer is exactly one JSON envelope line on stdout and one prose line on stderr,
 *    exit 1 (2 for an unknown command); a request for help is the help page, exit 0;
 * 2. when the envelope offers `retry`, the line is run as bash would split it: it must
 *    answer like the command the agent meant (for a mistake that destroyed a value: succeed,
 *    never at a higher tier), never the same error, never another error, never a changed or
 *    swallowed value. The rate is printed and must be ≥ 99 %;
 * 3. nothing secret-shaped and no long run of the input comes back on stdout or stderr;
 * 4. a did-you-mean names a word within edit distance 2 and ratio 0.4 of the one typed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import type { EnvelopeError } from '../../src/cli/types.js';
import { type AgentMistake, BASES, CORPUS } from './fixtures/agent-corpus.js';
import { buildBinary, spawnWith } from './fixtures/helpers.js';
import { CONNECTION_JSON, MANIFEST_JSON, TOKEN as CONNECTION_TOKEN } from './fixtures/vendor.js';

const { bin } = await buildBinary();
// Not mkdtemp: about half of its random suffixes look high-entropy to the secret-shape
// detector, and every retry holding the store path would then be dropped as a secret.
const work = join(tmpdir(), `clibroker-agent-corpus-${process.pid}`);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
t.teardown(() => {
  rmSync(dirname(dirname(bin)), { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});
const file = join(work, 'ext.json');
writeFileSync(file, MANIFEST_JSON);
const fill: Record<string, string> = {
  STORE: join(work, 'store.db'),
  QSTORE: join(work, 'frozen.db'),
  EXT: MANIFEST_JSON,
  EXT_SQ: MANIFEST_JSON.replaceAll('"', "'"),
  EXT_TC: MANIFEST_JSON.replace(/}$/, ',}'),
  MISSING: join(work, 'no-such-file.json'),
  FILE: file,
  '@FILE': `@${file}`,
};
const env = {
  CLIBROKER_CONNECTION: CONNECTION_JSON,
  CLIBROKER_MOCK_VENDOR: 'github',
  HOME: join(work, 'home'),
};
const spawn = (argv: string[], input = '') =>
  spawnWith(
    bin,
    argv.map((w) => fill[w] ?? w),
    { input, env },
  );

/** The words bash makes of each line (one bash for all of them). */
function bashWords(lines: readonly string[]): string[][] {
  if (!lines.length) return [];
  const script = lines.map((l) => `printf '%s\\0' ${l}; printf '\\1\\0'`).join('\n');
  const out = execFileSync('bash', ['-c', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const result: string[][] = [[]];
  for (const w of out.split('\0').slice(0, -1)) {
    if (w === '\x01') result.push([]);
    else result[result.length - 1]!.push(w);
  }
  return result.slice(0, -1);
}

// biome-ignore lint/suspicious/noExplicitAny: envelope data is compared structurally
const norm = (d: any): string =>
  JSON.stringify(
    d && typeof d === 'object' && 'runId' in d
      ? {
          status: d.status,
          exitCode: d.exitCode,
          cliTier: d.cliTier,
          cliTierReason: d.cliTierReason,
          requests: d.requests,
          stdout: d.stdout,
        }
      : d,
  );

const isHelpPage = (r: { code: number | null; stdout: string; stderr: string }) =>
  r.code === 0 && /^clibroker /.test(r.stdout) && /\nUSAGE\n/.test(r.stdout) && r.stderr === '';

/** Optimal-string-alignment distance (a transposition is one edit). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[a.length]![b.length]!;
}

/** The (typed, suggested) word pairs of a did-you-mean hint that differ (case aside). */
function suggested(e: EnvelopeError): [string, string][] {
  const hint = /did you mean (?:the topic )?'([^']+)'/.exec(e.hint ?? '')?.[1];
  if (!hint || !e.got || e.got.includes('…')) return [];
  const lower = (w: string) => w.replace(/^-+/, '').split('=')[0]!.toLowerCase();
  const said = hint
    .replace(/^clibroker /, '')
    .split(' ')
    .map(lower);
  const typed = (e.type === 'enum-mismatch' ? [e.got] : e.got.split(' ')).map(lower);
  if (e.type === 'enum-mismatch') said.splice(0, said.length - 1);
  return typed.flatMap((w, i): [string, string][] =>
    said[i] !== undefined && said[i] !== w ? [[w, said[i]!]] : [],
  );
}

type Outcome = 'recovered' | 'same error' | 'worse';

// Every mistake and its retry spawns the real binary (vendor run retries run real curl):
// minutes, not the suite's default two. The file's own timeout, not the subtest's, is what tap enforces.
t.setTimeout(900_000);

t.test('a hand-written corpus of agent mistakes through the spawned binary', async (t) => {
  t.ok(CORPUS.length >= 150, `${CORPUS.length} hand-written mistakes`);
  t.ok(
    spawn(BASES['run']!.map((w) => (w === 'STORE' ? 'QSTORE' : w))).env?.success,
    'the frozen store has a run in it',
  );
  // Each property is one assertion over the whole corpus, its failing cases listed in it.
  const want = new Map<string, string>();
  const basesFailing: string[] = [];
  for (const [k, argv] of Object.entries(BASES)) {
    const r = spawn(argv);
    if (!r.env?.success) basesFailing.push(`${k}: ${r.stdout.slice(0, 200)}`);
    want.set(k, norm(r.data));
  }
  t.same(basesFailing, [], `every base succeeds (${want.size} bases)`);
  const baseTier = spawn(BASES['run']!).data?.cliTier;
  const firsts: { m: AgentMistake; error: EnvelopeError }[] = [];
  const helpRetries: AgentMistake[] = [];
  const fail = {
    secret: [] as string[],
    token: [] as string[],
    run: [] as string[],
    long: [] as string[],
    succeeded: [] as string[],
    shape: [] as string[],
    help: [] as string[],
    far: [] as string[],
  };
  let secrets = 0;
  let runs = 0;
  let helps = 0;
  let suggestions = 0;
  // A long run can only come back from a mistake that typed one: only those are checked for it.
  const longRun = /A{300}|9{300}/;
  for (const m of CORPUS) {
    const r = spawn(m.argv, m.stdin);
    const all = r.stdout + r.stderr;
    if (m.secret) {
      secrets++;
      if (all.includes(m.secret) || all.includes(m.secret.slice(4, 24))) fail.secret.push(m.name);
    }
    if (all.includes(CONNECTION_TOKEN)) fail.token.push(m.name);
    if (longRun.test(m.argv.map((w) => fill[w] ?? w).join(' ') + (m.stdin ?? ''))) {
      runs++;
      if (longRun.test(all)) fail.run.push(m.name);
    }
    if (r.stdout.length >= 8000 || r.stderr.length >= 2000)
      fail.long.push(`${m.name} (${r.stdout.length}, ${r.stderr.length})`);
    if (m.help) helps++;
    if (m.help && isHelpPage(r)) continue;
    if (r.env?.success) {
      fail.succeeded.push(m.name);
      continue;
    }
    const e = r.env?.error;
    const one = r.stdout.trim().split('\n').length === 1 && e !== undefined;
    const code = e?.type === 'unknown-command' ? 2 : 1;
    const line = new RegExp(`^clibroker: ${e?.type}[^\\n]*\\n$`).test(r.stderr);
    if (!one || r.code !== code || !line) {
      fail.shape.push(
        `${m.name}: exit ${r.code} (want ${code}), stdout ${JSON.stringify(r.stdout.slice(0, 300))}, stderr ${JSON.stringify(r.stderr.slice(0, 300))}`,
      );
      continue;
    }
    if (m.help) {
      // only a mistyped command may answer --help with an error; its retry is the page
      if (e.type !== 'unknown-command' || !e.retry) fail.help.push(`${m.name}: ${r.stdout.slice(0, 200)}`);
      else helpRetries.push(m);
    }
    for (const [typed, said] of suggested(e)) {
      suggestions++;
      const dist = distance(typed, said);
      if (dist > 2 || dist / Math.max(typed.length, said.length) > 0.4)
        fail.far.push(`${m.name}: did-you-mean '${said}' for '${typed}' (${dist})`);
    }
    firsts.push({ m, error: e });
  }
  t.same(fail.secret, [], `no secret is echoed (${secrets} mistakes carry one)`);
  t.same(fail.token, [], `the connection's token is never echoed (${CORPUS.length} mistakes)`);
  t.ok(runs > 0, `${runs} mistakes type a long run of A or 9`);
  t.same(fail.run, [], `no long run of the input is echoed (${runs} mistakes type one)`);
  t.same(fail.long, [], `every answer stays short: stdout < 8000, stderr < 2000 (${CORPUS.length} mistakes)`);
  t.same(fail.succeeded, [], 'every mistake is one: none succeeds');
  t.same(
    fail.shape,
    [],
    'every error is one envelope line, one stderr line, exit 1 (2 for an unknown command)',
  );
  t.same(
    fail.help,
    [],
    `help wins: a request for help is the page, or a mistyped command's retry (${helps} asked)`,
  );
  t.same(
    fail.far,
    [],
    `every did-you-mean is within edit distance 2 and ratio 0.4 of the word typed (${suggestions} suggestions)`,
  );
  const offered = firsts.filter((f) => f.error.retry !== undefined);
  const words = bashWords(offered.map((f) => f.error.retry!));
  const outcomes = new Map<Outcome, string[]>();
  const note = (o: Outcome, s: string) => outcomes.set(o, [...(outcomes.get(o) ?? []), s]);
  const notClibroker: string[] = [];
  for (const [i, f] of offered.entries()) {
    const w = words[i]!;
    if (w[0] !== 'clibroker') notClibroker.push(`${f.m.name}: ${f.error.retry}`);
    const again = spawnWith(bin, w.slice(1), { input: f.m.stdin ?? '', env });
    const tail = `${f.error.retry!.slice(0, 300)} → ${again.stdout.slice(0, 300)}`;
    if (f.m.help) {
      note(isHelpPage(again) ? 'recovered' : 'worse', `${f.m.name}: ${tail}`);
      continue;
    }
    if (!again.env?.success) {
      const e = again.env?.error;
      note(
        e?.type === f.error.type && e?.flag === f.error.flag ? 'same error' : 'worse',
        `${f.m.name}: ${tail}`,
      );
      continue;
    }
    const ok = f.m.lossy
      ? again.data?.cliTier === undefined || again.data.cliTier === baseTier
      : norm(again.data) === want.get(f.m.base);
    note(ok ? 'recovered' : 'worse', `${f.m.name}: ${tail}`);
  }
  t.same(notClibroker, [], `every retry is a clibroker command line (${offered.length} retries)`);
  const noRetry = firsts.filter((f) => f.error.retry === undefined);
  for (const f of noRetry)
    t.comment(
      `no retry: ${f.m.name}: ${f.error.type} ${f.error.flag ?? ''} — ${f.error.hint ?? '(no hint)'}`,
    );
  const n = (o: Outcome) => outcomes.get(o)?.length ?? 0;
  const rate = n('recovered') / Math.max(1, offered.length);
  const line = `agent corpus: ${n('recovered')}/${offered.length} retries recovered = ${(rate * 100).toFixed(1)} % (${CORPUS.length} mistakes, ${firsts.length} errors, ${noRetry.length} without a retry; same error ${n('same error')}, worse ${n('worse')})`;
  console.log(line);
  t.comment(line);
  for (const o of ['same error', 'worse'] as const)
    for (const s of outcomes.get(o) ?? []) t.comment(`${o}: ${s}`);
  t.ok(rate >= 0.99, line);
  t.equal(n('same error'), 0, 'no retry brings the same error back');
  t.equal(n('worse'), 0, 'no retry makes things worse');
  t.ok(
    helpRetries.length <= 2,
    `help wins nearly everywhere (${helpRetries.length} mistyped commands answered with a retry)`,
  );
});
