/**
 * Mutation testing for the security core: a short list of named mutants, each one line of a
 * security rule broken on purpose, and the test files that must notice. Run on demand and
 * before a release, never in CI (docs/testing.md):
 *
 *   npx tsx scripts/mutants.ts                 every mutant, one at a time
 *   npx tsx scripts/mutants.ts --only <name>   one mutant (repeatable)
 *   npx tsx scripts/mutants.ts --list          the mutants, their rules and tests; runs nothing
 *   npx tsx scripts/mutants.ts --working-tree  mutate the working tree as it is, not HEAD
 *   npx tsx scripts/mutants.ts --no-baseline   skip the unmutated run of the listed tests
 *
 * The repository's own files are never touched: the script copies HEAD (or the working tree)
 * into a temporary directory with node_modules symlinked, first runs the listed tests there
 * unmutated (a test that already fails would "kill" every mutant), then for each mutant
 * replaces its snippet, rebuilds the JavaScript (some tests spawn the binary), runs its tests
 * with tap and puts the file back. A snippet that does not occur exactly once stops the
 * script before anything runs, so a mutant cannot rot into a no-op when the code moves.
 *
 * Exit status: 0 every mutant killed, 1 one survived, 2 the script could not run them.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Mutant {
  name: string;
  /** under src/ */
  file: string;
  /** must occur exactly once in the file */
  find: string;
  replace: string;
  /** the rule the mutant breaks, one line */
  rule: string;
  /** the narrowest set of test files that must fail */
  tests: string[];
}

const MUTANTS: Mutant[] = [
  {
    name: 'policy-delete-is-write',
    file: 'src/policy/method.ts',
    find: "['DELETE', { class: 'destructive', reason: 'method-destructive' }],",
    replace: "['DELETE', { class: 'write', reason: 'method-destructive' }],",
    rule: 'DELETE classifies destructive, not write',
    tests: ['tests/policy/classify-methods.test.ts'],
  },
  {
    name: 'policy-graphql-mutation-is-read',
    file: 'src/policy/graphql-request.ts',
    find: "if (o.type !== 'query') cls = 'write';",
    replace: "if (o.type === 'subscription') cls = 'write';",
    rule: 'a GraphQL mutation classifies write, never read',
    tests: ['tests/policy/classify-graphql.test.ts'],
  },
  {
    name: 'policy-tier-off-by-one',
    file: 'src/policy/decide.ts',
    find: "if (tier !== 'write')\n    return deny(",
    replace: "if (tier !== 'write' && cls === 'destructive')\n    return deny(",
    rule: 'tier read allows reads only: a class one step above the tier is refused',
    tests: ['tests/policy/decide.test.ts'],
  },
  {
    name: 'policy-ceiling-ignored',
    file: 'src/policy/tier.ts',
    find: "if (input.organizationCeiling !== 'write') return { tier: 'read', reason: 'organization-ceiling' };",
    replace: '',
    rule: "a requested write is capped by the organization's ceiling",
    tests: ['tests/policy/decide.test.ts'],
  },
  {
    name: 'broker-budget-off-by-one',
    file: 'src/broker/pipeline.ts',
    find: 'if (s.stats.requests > s.limits.maxRequests) {',
    replace: 'if (s.stats.requests > s.limits.maxRequests + 1) {',
    rule: 'the request past the budget is refused and never reaches upstream',
    tests: ['tests/broker/requests.test.ts'],
  },
  {
    name: 'broker-upgrade-forwarded',
    file: 'src/broker/inner.ts',
    find: 'if (head.upgrade) {',
    replace: 'if (false && head.upgrade) {',
    rule: 'a request asking for a protocol upgrade is refused, not forwarded',
    tests: ['tests/broker/hostile.test.ts'],
  },
  {
    name: 'broker-any-port',
    file: 'src/broker/tunnel.ts',
    find: 'if (target.port !== 443) {',
    replace: 'if (false && target.port !== 443) {',
    rule: 'CONNECT to any port but 443 is refused',
    tests: ['tests/broker/connect.test.ts'],
  },
  {
    name: 'broker-child-credential-kept',
    file: 'src/broker/headers.ts',
    find: '  ...CHILD_CREDENTIAL_HEADERS,\n]);',
    replace: ']);',
    rule: "the child's own Authorization and Proxy-Authorization never go upstream",
    tests: ['tests/broker/requests.test.ts'],
  },
  {
    name: 'runs-resume-approves-every-destructive',
    file: 'src/runs/gate.ts',
    find: 'approvedDigests: [...approved],',
    replace: 'approvedDigests: digest && approved.size > 0 ? [digest] : [...approved],',
    rule: 'a resumed run carries the approval of one request digest, not of every destructive request',
    tests: [
      'tests/runs/rerun-other-destructive.test.ts',
      'tests/runs/rerun-second-destructive.test.ts',
      'tests/runs/gh.test.ts',
    ],
  },
  {
    name: 'runs-consumed-approval-reused',
    file: 'src/runs/gate.ts',
    find: 'if (id === undefined) {',
    replace: 'if (false && id === undefined) {',
    rule: 'an approval the store reports already consumed does not let the request out',
    tests: [
      'tests/runs/resume-race.test.ts',
      'tests/runs/approval-delivery.test.ts',
      'tests/runs/gh.test.ts',
    ],
  },
  {
    name: 'mask-own-short-secret',
    file: 'src/runs/mask.ts',
    find: '.filter((x) => x.length >= MASK_MIN || (x.length > 0 && own.has(x)))',
    replace: '.filter((x) => x.length >= MASK_MIN)',
    rule: "the connection's own secret is masked in the output however short it is",
    tests: ['tests/runs/reflect.test.ts'],
  },
  {
    name: 'mask-skipped-when-truncated',
    file: 'src/runs/execute.ts',
    find: 'stdout: maskOutput(sb.stdout, masked.stamped, sb.truncated, masked.own),',
    replace:
      'stdout: sb.truncated ? sb.stdout : maskOutput(sb.stdout, masked.stamped, sb.truncated, masked.own),',
    rule: 'output the cap cut is masked like any other',
    tests: ['tests/runs/reflect.test.ts', 'tests/runs/steps.test.ts'],
  },
  {
    name: 'mask-cut-prefix-kept',
    file: 'src/runs/mask.ts',
    find: 'if (!truncated) return out;',
    replace: 'return out;',
    rule: 'cut output does not end with the first characters of a secret',
    tests: ['tests/runs/reflect.test.ts', 'tests/runs/steps.test.ts'],
  },
  {
    name: 'daemon-socket-foreign-inode-removed',
    file: 'src/daemon/socket.ts',
    find: 'if (now && now.ino === ino && now.dev === dev) await unlink(path)',
    replace: 'if (now) await unlink(path)',
    rule: 'closing removes the socket path only while it is still the inode the daemon bound',
    tests: ['tests/daemon/socket-ownership.test.ts', 'tests/daemon/server.test.ts'],
  },
  {
    name: 'daemon-socket-mode-ignored',
    file: 'src/daemon/socket.ts',
    find: 'await chmod(tmp, mode);',
    replace: '',
    rule: 'the socket has the configured mode before it is reachable',
    tests: ['tests/daemon/server.test.ts'],
  },
  {
    name: 'store-failure-gate-not-stopped',
    file: 'src/runs/execute.ts',
    find: "own.stop(lostRecordRefusal(err, 'this call'));",
    replace: '',
    rule: 'after an audit write fails, the call sends no further request',
    tests: ['tests/host/store-full.test.ts', 'tests/runs/steps.test.ts'],
  },
  {
    name: 'store-failure-others-not-stopped',
    file: 'src/runs/execute.ts',
    find: "for (const g of this.#gates) if (g !== own) g.stop(lostRecordRefusal(err, 'another call'));",
    replace: '',
    rule: 'after an audit write fails, the other running calls send no further request either',
    tests: ['tests/host/store-full.test.ts', 'tests/runs/steps.test.ts'],
  },
];

/** One tap run may take this long before it is killed and counted as an error. */
const RUN_TIMEOUT_MS = 20 * 60_000;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: tsx scripts/mutants.ts [--only <name>]... [--list] [--working-tree] [--no-baseline]\n`,
  );
  process.exit(2);
}

function parseArgs(argv: string[]): {
  only: string[];
  list: boolean;
  workingTree: boolean;
  baseline: boolean;
} {
  const out = { only: [] as string[], list: false, workingTree: false, baseline: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--list') out.list = true;
    else if (a === '--working-tree') out.workingTree = true;
    else if (a === '--no-baseline') out.baseline = false;
    else if (a === '--only') {
      const name = argv[++i];
      if (name === undefined) usage('--only needs a mutant name');
      out.only.push(name);
    } else usage(`unknown argument: ${a}`);
  }
  return out;
}

function occurrences(text: string, snippet: string): number {
  let n = 0;
  for (let at = text.indexOf(snippet); at !== -1; at = text.indexOf(snippet, at + 1)) n++;
  return n;
}

/** The repository's files in `dir`: HEAD's (git archive), or the working tree's tracked and untracked ones. */
function copyRepository(dir: string, workingTree: boolean): void {
  if (!workingTree) {
    const r = spawnSync('sh', ['-c', `git archive --format=tar HEAD | tar -x -C '${dir}'`], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (r.status !== 0) throw new Error('git archive HEAD failed');
    return;
  }
  const ls = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (ls.status !== 0) throw new Error('git ls-files failed');
  for (const f of ls.stdout.split('\0')) {
    if (f === '') continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    try {
      cpSync(join(root, f), join(dir, f), { verbatimSymlinks: true });
    } catch (e) {
      // a tracked file deleted in the working tree is deleted in the copy too
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
}

interface TapRun {
  ok: boolean;
  /** the first failing assertion, as TAP names it */
  firstFailure?: string;
  ms: number;
  timedOut: boolean;
}

/**
 * The first `not ok` line of a TAP stream that is not a TODO (the innermost failure comes
 * first), named with the subtests it is in: `file: test › subtest › assertion`; else the
 * assertion a bailed run names.
 */
function firstFailure(tap: string): string | undefined {
  const within: string[] = [];
  for (const line of tap.split('\n')) {
    const sub = /^(\s*)# Subtest: (.*)$/.exec(line);
    if (sub) {
      const depth = Math.floor(sub[1]!.length / 4);
      within.length = depth;
      within[depth] = sub[2]!.trim();
      continue;
    }
    const m = /^(\s*)not ok \d+(?: - (.*))?$/.exec(line);
    if (!m) continue;
    const text = m[2] ?? '(unnamed)';
    if (/#\s*TODO\b/i.test(text)) continue;
    const [file, ...tests] = within.slice(0, Math.floor(m[1]!.length / 4));
    const name = [...tests, text.replace(/\s+#\s*time=.*$/, '').trim()].join(' › ');
    return file === undefined ? name : `${basename(file)}: ${name}`;
  }
  // with --bail, a run of several files may print only the assertion it bailed on
  const bailed = /^Bail out! (.+)$/m.exec(tap);
  return bailed ? bailed[1]!.trim() : undefined;
}

function runTap(dir: string, files: string[], bail: boolean): Promise<TapRun> {
  const started = Date.now();
  return new Promise((resolvePromise) => {
    const args = ['--reporter=tap', '--no-color', ...(bail ? ['--bail'] : []), ...files];
    const child = spawn(join(dir, 'node_modules', '.bin', 'tap'), args, {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString('utf8');
    });
    child.stderr.on('data', () => undefined);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, RUN_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const failure = firstFailure(out);
      resolvePromise({
        ok: code === 0 && !timedOut,
        ...(failure !== undefined ? { firstFailure: failure } : {}),
        ms: Date.now() - started,
        timedOut,
      });
    });
  });
}

function buildCli(dir: string): void {
  const r = spawnSync('npm', ['run', '-s', 'build:js'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error('npm run build:js failed in the copy');
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ');

async function main(): Promise<number> {
  const opts = parseArgs(process.argv.slice(2));
  const names = new Set(MUTANTS.map((m) => m.name));
  if (names.size !== MUTANTS.length) throw new Error('two mutants share a name');
  for (const n of opts.only) if (!names.has(n)) usage(`no mutant named ${n}; --list shows them`);
  const chosen = opts.only.length > 0 ? MUTANTS.filter((m) => opts.only.includes(m.name)) : MUTANTS;

  if (opts.list) {
    process.stdout.write(
      chosen.map((m) => `${m.name}\n  ${m.rule}\n  ${m.file}; ${m.tests.join(' ')}\n`).join(''),
    );
    return 0;
  }

  const dir = mkdtempSync(join(tmpdir(), 'cbm-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const onSignal = () => {
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    process.stderr.write(`copying ${opts.workingTree ? 'the working tree' : 'HEAD'} into ${dir}\n`);
    copyRepository(dir, opts.workingTree);
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');

    // every snippet exactly once, every listed test present, before anything runs (all mutants,
    // not only the chosen ones: a rotten one is reported on any run)
    const problems: string[] = [];
    for (const m of MUTANTS) {
      if (!m.file.startsWith('src/')) problems.push(`${m.name}: ${m.file} is not under src/`);
      let text: string;
      try {
        text = readFileSync(join(dir, m.file), 'utf8');
      } catch {
        problems.push(`${m.name}: ${m.file} does not exist`);
        continue;
      }
      const n = occurrences(text, m.find);
      if (n !== 1)
        problems.push(`${m.name}: its snippet occurs ${n} times in ${m.file} (must be exactly once)`);
      if (m.find === m.replace) problems.push(`${m.name}: the replacement is the snippet itself`);
      for (const t of m.tests) {
        try {
          readFileSync(join(dir, t));
        } catch {
          problems.push(`${m.name}: test file ${t} does not exist`);
        }
      }
    }
    if (problems.length > 0) {
      process.stderr.write(
        `mutants out of date with the code, nothing was run:\n  ${problems.join('\n  ')}\n`,
      );
      return 2;
    }

    buildCli(dir);
    if (opts.baseline) {
      const files = [...new Set(chosen.flatMap((m) => m.tests))].sort();
      process.stderr.write(`baseline: ${files.length} test files, unmutated\n`);
      const base = await runTap(dir, files, false);
      if (!base.ok) {
        process.stderr.write(
          `the tests fail without any mutant (${base.timedOut ? 'timed out' : (base.firstFailure ?? 'tap failed')}); ` +
            'fix them first, or every mutant would count as killed\n',
        );
        return 2;
      }
      process.stderr.write(`baseline passed in ${(base.ms / 1000).toFixed(0)}s\n`);
    }

    const rows: { m: Mutant; run: TapRun }[] = [];
    for (const m of chosen) {
      const path = join(dir, m.file);
      const original = readFileSync(path, 'utf8');
      writeFileSync(
        path,
        original.replace(m.find, () => m.replace),
      );
      let run: TapRun;
      try {
        buildCli(dir);
        process.stderr.write(`${m.name}: ${m.tests.join(' ')} … `);
        run = await runTap(dir, m.tests, true);
      } finally {
        writeFileSync(path, original);
      }
      process.stderr.write(`${run.ok ? 'SURVIVED' : 'killed'} (${(run.ms / 1000).toFixed(0)}s)\n`);
      rows.push({ m, run });
    }
    buildCli(dir);

    const killed = rows.filter((r) => !r.run.ok).length;
    const lines = [
      '| mutant | rule | result | first failing assertion |',
      '| --- | --- | --- | --- |',
      ...rows.map(({ m, run }) => {
        const why = run.ok
          ? '—'
          : run.timedOut
            ? `(killed at the ${RUN_TIMEOUT_MS / 60_000}-minute limit)`
            : (run.firstFailure ?? '(tap failed without a failing assertion)');
        return `| ${m.name} | ${cell(m.rule)} | ${run.ok ? '**survived**' : 'killed'} | ${cell(why)} |`;
      }),
      '',
      `${killed}/${rows.length} killed`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return killed === rows.length ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    cleanup();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  },
);
