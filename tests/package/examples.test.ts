/**
 * The examples and the README's quick start, run as a host runs them: from the packed tarball
 * installed into a fresh project (`import … from 'clibroker'`), never from the sources, so a
 * snippet cannot drift from the package. The tarball's dependencies are linked from this
 * checkout's node_modules, so nothing is downloaded. The examples are taken from the installed
 * package (they ship in it), type-check against the package's own declarations (checkJs), then
 * each runs as is: offline, with no token in its environment, against the embedded mock vendor
 * it starts itself, with the system's curl and gh. What it prints is compared with the output
 * its header comment shows.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { packedTarball } from '../helpers/packed.js';

t.setTimeout(600_000); // packing builds the package (tsc and esbuild) before any example runs

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

/** The leading comment block of an example: the lines before its first import. */
const header = (source: string): string[] => {
  const lines = source.split('\n');
  const end = lines.findIndex((l) => !l.startsWith('//'));
  return lines.slice(0, end);
};

/**
 * The output an example's header shows: after the line saying what it prints and an empty
 * comment line, the lines indented by two spaces (`//   …`), without the indentation.
 */
function expectedOutput(source: string): string {
  const lines = header(source);
  const says = lines.findIndex((l) => l.includes('It prints'));
  const start = lines.indexOf('//', says) + 1;
  if (says < 0 || start === 0) throw new Error('the example has no "It prints" block in its header');
  const shown: string[] = [];
  for (const l of lines.slice(start)) {
    if (!l.startsWith('//   ')) break;
    shown.push(l.slice(5));
  }
  return `${shown.join('\n')}\n`;
}

/** node --test's durations vary from run to run: the headers show them as `…`. */
const withoutDurations = (out: string): string =>
  out.replace(/\(\d+(?:\.\d+)?ms\)/g, '(…ms)').replace(/duration_ms \d+(?:\.\d+)?/g, 'duration_ms …');

/** Each example, with the arguments node runs it with (the command its header names). */
const EXAMPLES: [file: string, args: string[]][] = [
  ['quick-start.mjs', ['quick-start.mjs']],
  ['validate-manifest.mjs', ['validate-manifest.mjs']],
  ['embed-curl.mjs', ['embed-curl.mjs']],
  ['gh-approval.mjs', ['gh-approval.mjs']],
  ['host-integration.test.mjs', ['--test', '--test-reporter=spec', 'host-integration.test.mjs']],
];

/** The README's quick start: the program between the markers, and the output it shows. */
function quickStart(): { program: string; output: string } {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /<!-- quick-start:begin[^>]*-->([\s\S]*?)<!-- quick-start:end -->/.exec(readme)?.[1];
  const program = block && /```js\n([\s\S]*?)```/.exec(block)?.[1];
  const output = block && /```text\n([\s\S]*?)```/.exec(block)?.[1];
  if (!program || !output)
    throw new Error('README.md has no quick-start block with a js program and its text output');
  return { program, output };
}

/** The packed package (prepare built it in a clean copy), installed into a new project. */
async function installPackage(t: Test): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), 'clibroker-examples-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const { tarball } = await packedTarball();

  const project = join(work, 'host');
  const pkg = join(project, 'node_modules', 'clibroker');
  mkdirSync(pkg, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', pkg, '--strip-components=1']);
  // the package's dependencies (and @types for the type check), linked instead of downloaded
  for (const dep of readdirSync(join(root, 'node_modules'))) {
    if (dep === 'clibroker' || dep.startsWith('.')) continue;
    symlinkSync(join(root, 'node_modules', dep), join(project, 'node_modules', dep));
  }
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'a-host', private: true, type: 'module' }),
  );
  // a user copies the examples out of the installed package into their own project
  cpSync(join(pkg, 'examples'), project, { recursive: true });
  return project;
}

const node = (cwd: string, args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env },
    timeout: 240_000,
  });

t.test('the examples and the quick start run from the packed package', { timeout: 900_000 }, async (t) => {
  const project = await installPackage(t);
  t.ok(existsSync(join(project, 'node_modules/clibroker/dist/index.d.ts')), 'the tarball is installed');

  await t.test('every example type-checks against the package as published', async (t) => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          allowJs: true,
          checkJs: true,
          noEmit: true,
          strict: false,
          types: ['node'],
        },
        include: ['*.mjs'],
      }),
    );
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const r = await node(project, [tsc, '-p', 'tsconfig.json']).then(
      () => '',
      (e: { stdout?: string }) => e.stdout ?? String(e),
    );
    t.equal(r, '', 'tsc --checkJs reports nothing');
  });

  await t.test('the README quick start prints what the README shows', async (t) => {
    const { program, output } = quickStart();
    writeFileSync(join(project, 'readme-quick-start.mjs'), program);
    const { stdout } = await node(project, ['readme-quick-start.mjs']);
    t.equal(stdout, output);
    const example = readFileSync(join(project, 'quick-start.mjs'), 'utf8');
    t.equal(
      example.split('\n').slice(header(example).length).join('\n'),
      program,
      'examples/quick-start.mjs is the same program under its header',
    );
  });

  t.same(
    readdirSync(project)
      .filter((f) => f.endsWith('.mjs') && f !== 'readme-quick-start.mjs')
      .sort(),
    EXAMPLES.map(([f]) => f).sort(),
    'every example shipped is run below',
  );

  for (const [file, args] of EXAMPLES)
    await t.test(`${file} prints what its header shows (offline, no token)`, async (t) => {
      const expected = expectedOutput(readFileSync(join(project, file), 'utf8'));
      const { stdout } = await node(project, args);
      t.equal(withoutDurations(stdout), expected);
      t.notMatch(stdout, /token undefined/);
    });

  for (const file of ['embed-curl.mjs', 'gh-approval.mjs'])
    await t.test(`${file} asked for the real vendor without a token: a clear message, exit 1`, async (t) => {
      const r = await node(project, [file], { CLIBROKER_EXAMPLE_REAL: '1' }).then(
        () => ({ code: 0, stdout: '', stderr: '' }),
        (e: { code?: number; stdout?: string; stderr?: string }) => e,
      );
      t.equal(r.code, 1);
      t.equal(r.stdout, '', 'nothing was run');
      t.match(r.stderr, /^CLIBROKER_EXAMPLE_REAL=1 runs against api\.github\.com: set GITHUB_TOKEN/);
    });
});
