/**
 * The examples and the README's quick start, run as a host runs them: from the packed tarball
 * installed into a fresh project (`import … from 'clibroker'`), never from the sources, so a
 * snippet cannot drift from the package. The tarball's dependencies are linked from this
 * checkout's node_modules, so nothing is downloaded. The examples type-check against the
 * package's own declarations (checkJs), then each runs against the embedded mock vendor with
 * the system's curl and gh, and its printed output is checked.
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
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';

t.setTimeout(600_000); // packing builds the package (tsc and esbuild) before any example runs

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const SKIP = new Set(['node_modules', 'dist', '.git', '.tap', 'coverage']);
const TOKEN = 'gho_ExampleRealTokenKeptByTheBroker01';

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

/** Packs a clean copy (prepack builds it) and installs the tarball into a new project. */
async function installPackage(t: Test): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), 'clibroker-examples-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const copy = join(work, 'copy');
  cpSync(root, copy, { recursive: true, filter: (src) => !SKIP.has(basename(src)) });
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: copy,
    maxBuffer: 16 << 20,
  });
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];

  const project = join(work, 'host');
  const pkg = join(project, 'node_modules', 'clibroker');
  mkdirSync(pkg, { recursive: true });
  await run('tar', ['-xzf', join(work, filename), '-C', pkg, '--strip-components=1']);
  // the package's dependencies (and @types for the type check), linked instead of downloaded
  for (const dep of readdirSync(join(root, 'node_modules'))) {
    if (dep === 'clibroker' || dep.startsWith('.')) continue;
    symlinkSync(join(root, 'node_modules', dep), join(project, 'node_modules', dep));
  }
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'a-host', private: true, type: 'module' }),
  );
  cpSync(join(root, 'examples'), project, { recursive: true });
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
    writeFileSync(join(project, 'quick-start.mjs'), program);
    const { stdout } = await node(project, ['quick-start.mjs']);
    t.equal(stdout, output);
    t.equal(
      program,
      readFileSync(join(root, 'examples/quick-start.mjs'), 'utf8'),
      'examples/quick-start.mjs is the same program',
    );
  });

  await t.test('validate-manifest: the good manifest passes, the bad one lists its problems', async (t) => {
    const { stdout } = await node(project, ['validate-manifest.mjs']);
    t.match(stdout, /^valid: github with gh\n/);
    t.match(stdout, /refused: MANIFEST_INVALID\n/);
    t.match(stdout, / {2}egress\[0\]: MANIFEST_EGRESS_HOST_NOT_DNS\n/, 'the wildcard host is named');
    t.match(stdout, / {2}egress\[1\]: MANIFEST_EGRESS_HOST_NOT_DNS\n/, 'the host with a port is named');
  });

  await t.test('against the embedded mock vendor', async (t) => {
    const vendor = await startMockVendor(githubVendor({ token: TOKEN }));
    t.teardown(() => vendor.close());
    const env = {
      GITHUB_TOKEN: TOKEN,
      CLIBROKER_EXAMPLE_VENDOR: JSON.stringify({ port: vendor.port, caPem: vendor.caPem }),
    };

    await t.test('embed-curl: curl reads /user, the broker stamped the real token', async (t) => {
      const before = vendor.log.length;
      const { stdout } = await node(project, ['embed-curl.mjs'], env);
      t.match(stdout, /^curl: login \S+\n/);
      t.match(stdout, /audit: egress\.allowed GET api\.github\.com\/user → 200\n/);
      t.match(stdout, /stats: 1 request, 1 forwarded\n/);
      const seen = vendor.log.slice(before);
      t.equal(seen.length, 1);
      t.equal(
        seen[0]?.headers.authorization,
        `token ${TOKEN}`,
        'the vendor saw the real token, not the placeholder',
      );
    });

    await t.test('gh-approval: DELETE pauses, is approved, is sent exactly once', async (t) => {
      const before = vendor.log.length;
      const { stdout } = await node(project, ['gh-approval.mjs'], env);
      t.equal(
        stdout,
        [
          'run: paused',
          'pending approval: DELETE api.github.com/repos/acme/app',
          'resumed: completed, gh exit 0',
          'resuming again: APPROVAL_NOT_PENDING',
          '',
        ].join('\n'),
      );
      const deletes = vendor.log.slice(before).filter((r) => r.method === 'DELETE');
      t.equal(deletes.length, 1, 'the vendor got the DELETE once');
    });
  });

  await t.test('host-integration: the host test passes under node --test', async (t) => {
    const { stdout } = await node(project, ['--test', 'host-integration.test.mjs']);
    t.match(stdout, /# pass 3\n/);
    t.match(stdout, /# fail 0\n/);
  });
});
