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
  const want = new Map<string, string>();
  for (const [k, argv] of Object.entries(BASES)) {
    const r = spawn(argv);
    t.ok(r.env?.success, `base ${k} succeeds (${r.stdout.slice(0, 200)})`);
    want.set(k, norm(r.data));
  }
  const baseTier = spawn(BASES['run']!).data?.cliTier;
  const firsts: { m: AgentMistake; error: EnvelopeError }[] = [];
  const helpRetries: AgentMistake[] = [];
  for (const m of CORPUS) {
    const r = spawn(m.argv, m.stdin);
    const all = r.stdout + r.stderr;
    if (m.secret)
      t.notOk(
        all.includes(m.secret) || all.includes(m.secret.slice(4, 24)),
        `${m.name}: the secret is not echoed`,
      );
    t.notOk(all.includes(CONNECTION_TOKEN), `${m.name}: the connection's token is not echoed`);
    t.notOk(/A{300}|9{300}/.test(all), `${m.name}: no long run of the input is echoed`);
    t.ok(
      r.stdout.length < 8000 && r.stderr.length < 2000,
      `${m.name}: the answer stays short (${r.stdout.length}, ${r.stderr.length})`,
    );
    if (m.help && isHelpPage(r)) continue;
    if (r.env?.success) {
      t.fail(`${m.name}: not a mistake, it succeeded`);
      continue;
    }
    const e = r.env?.error;
    const one = r.stdout.trim().split('\n').length === 1 && e !== undefined;
    const code = e?.type === 'unknown-command' ? 2 : 1;
    const line = new RegExp(`^clibroker: ${e?.type}[^\\n]*\\n$`).test(r.stderr);
    if (!one || r.code !== code || !line) {
      t.fail(`${m.name}: one envelope, one stderr line, exit ${code}`, {
        code: r.code,
        stdout: r.stdout.slice(0, 300),
        stderr: r.stderr.slice(0, 300),
      });
      continue;
    }
    if (m.help) {
      // only a mistyped command may answer --help with an error; its retry is the page
      if (e.type !== 'unknown-command' || !e.retry)
        t.fail(`${m.name}: help wins (${r.stdout.slice(0, 200)})`);
      else helpRetries.push(m);
    }
    for (const [typed, said] of suggested(e)) {
      const dist = distance(typed, said);
      t.ok(
        dist <= 2 && dist / Math.max(typed.length, said.length) <= 0.4,
        `${m.name}: did-you-mean '${said}' is near '${typed}' (${dist})`,
      );
    }
    firsts.push({ m, error: e });
  }
  const offered = firsts.filter((f) => f.error.retry !== undefined);
  const words = bashWords(offered.map((f) => f.error.retry!));
  const outcomes = new Map<Outcome, string[]>();
  const note = (o: Outcome, s: string) => outcomes.set(o, [...(outcomes.get(o) ?? []), s]);
  for (const [i, f] of offered.entries()) {
    const w = words[i]!;
    t.equal(w[0], 'clibroker', `${f.m.name}: the retry is a clibroker command line`);
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
