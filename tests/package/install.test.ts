/**
 * The package as a host installs it: the library built from this tree into a consumer's
 * node_modules, next to its real dependencies but without better-sqlite3 (an optional peer,
 * native code) and without any @types a consumer would not have.
 *
 * - Its published types check in a consumer with skipLibCheck off: no .d.ts needs the
 *   driver's (or pg's) types, which would fail with TS7016.
 * - The library loads and a broker runs without the driver; opening the embedded store
 *   then fails with STORE_DRIVER_MISSING, not retryable, saying how to install it.
 * - The same when the driver's JavaScript is there but its native part was never built
 *   (installed with scripts skipped).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import t from 'tap';
import { buildOptions, ENTRIES } from '../../scripts/build.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const modules = join(root, 'node_modules');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  exports: Record<string, unknown>;
};

const consumer = mkdtempSync(join(tmpdir(), 'clibroker-consumer-'));
t.teardown(() => rmSync(consumer, { recursive: true, force: true }));
const pkg = join(consumer, 'node_modules', 'clibroker');

t.before(async () => {
  mkdirSync(pkg, { recursive: true });
  cpSync(join(root, 'package.json'), join(pkg, 'package.json'));
  // The runtime dependencies a host's install brings, and @types/node (a Node host has it).
  for (const dep of [...Object.keys(manifest.dependencies), '@types/node']) {
    mkdirSync(join(consumer, 'node_modules', dep, '..'), { recursive: true });
    symlinkSync(join(modules, dep), join(consumer, 'node_modules', dep), 'dir');
  }
  // built as the package is: tsc's declarations, then the JavaScript by the package's own build
  await run(
    process.execPath,
    [join(modules, 'typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(pkg, 'dist')],
    {
      cwd: root,
    },
  );
  await build(buildOptions(ENTRIES, join(pkg, 'dist')));
});

t.test('the store drivers are optional peers, never installed with clibroker', async (t) => {
  const meta = (manifest as { peerDependenciesMeta?: Record<string, { optional?: boolean }> })
    .peerDependenciesMeta;
  for (const peer of ['better-sqlite3', 'pg']) {
    t.notOk(peer in manifest.dependencies, `${peer} is not a dependency`);
    t.notOk(
      manifest.optionalDependencies?.[peer],
      `${peer} is not an optional dependency (installed by default)`,
    );
    t.ok(manifest.peerDependencies?.[peer], `${peer} is a peer, with the range the library works with`);
    t.equal(meta?.[peer]?.optional, true, `${peer} is an optional peer: npm does not install it`);
  }
  const sdk = '@modelcontextprotocol/sdk';
  t.notOk(
    sdk in manifest.dependencies || manifest.peerDependencies?.[sdk] || manifest.optionalDependencies?.[sdk],
    'the MCP SDK is none of them: the build inlines the parts serve uses',
  );
});

t.test('the published types check with skipLibCheck off and no driver types', async (t) => {
  const subpaths = Object.keys(manifest.exports).filter((k) => k !== './package.json');
  const imports = subpaths.map((k, i) => `import * as m${i} from '${join('clibroker', k)}';`).join('\n');
  writeFileSync(
    join(consumer, 'index.ts'),
    `${imports}\nimport { createBroker, openSqliteStore, type Store } from 'clibroker';\n` +
      `export const all = [${subpaths.map((_, i) => `m${i}`).join(', ')}];\n` +
      'export const open: (path: string) => Store = openSqliteStore;\nexport const start = createBroker;\n',
  );
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2023'],
        types: ['node'],
        strict: true,
        skipLibCheck: false,
        noEmit: true,
      },
      files: ['index.ts'],
    }),
  );
  const out = await run(process.execPath, [join(modules, 'typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: consumer,
  }).then(
    () => '',
    (err: { stdout: string }) => err.stdout,
  );
  t.equal(out, '', 'tsc reports nothing');
  t.equal(subpaths.length >= 4, true, `checked ${subpaths.join(', ')}`);
});

/** Run `code` as an ES module in the consumer; its stdout parsed as JSON. */
async function inConsumer(code: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: consumer });
  return JSON.parse(stdout) as Record<string, unknown>;
}

const OPEN_STORE = `
import { createBroker, openSqliteStore, openStore } from 'clibroker';
const broker = await createBroker();
const session = broker.openSession({ egress: ['api.github.com'] });
const out = { broker: session.proxyUrl.startsWith('http://'), errors: [] };
session.close();
await broker.close();
for (const open of [() => openSqliteStore(':memory:'), () => openStore(':memory:')]) {
  try {
    await open();
    out.errors.push(null);
  } catch (e) {
    out.errors.push({ code: e.code, retry: e.retry, message: e.message, details: e.details });
  }
}
console.log(JSON.stringify(out));
`;

t.test('without better-sqlite3 the broker runs and the store says how to install it', async (t) => {
  const out = await inConsumer(OPEN_STORE);
  t.equal(out['broker'], true, 'a broker started and opened a session');
  const errors = out['errors'] as { code: string; retry: boolean; message: string; details: object }[];
  t.equal(errors.length, 2);
  for (const e of errors) {
    t.equal(e?.code, 'STORE_DRIVER_MISSING');
    t.equal(e?.retry, false, 'not retryable');
    t.match(e?.message, /npm install better-sqlite3/);
    t.same(e?.details, { driver: 'better-sqlite3', reason: 'absent' });
  }
});

t.test(
  'better-sqlite3 installed with its scripts skipped: STORE_DRIVER_MISSING, not a retryable write failure',
  async (t) => {
    // Its JavaScript without the build/ the install script would have compiled.
    const copy = join(consumer, 'node_modules', 'better-sqlite3');
    cpSync(join(modules, 'better-sqlite3'), copy, {
      recursive: true,
      filter: (src) => basename(src) !== 'build',
    });
    for (const dep of ['bindings', 'file-uri-to-path'])
      symlinkSync(join(modules, dep), join(consumer, 'node_modules', dep), 'dir');
    t.teardown(() => rmSync(copy, { recursive: true, force: true }));
    const out = await inConsumer(OPEN_STORE);
    const errors = out['errors'] as { code: string; retry: boolean; message: string; details: object }[];
    for (const e of errors) {
      t.equal(e?.code, 'STORE_DRIVER_MISSING');
      t.equal(e?.retry, false, 'not retryable');
      t.match(e?.message, /npm rebuild better-sqlite3/);
      t.same(e?.details, { driver: 'better-sqlite3', reason: 'not built' });
    }
  },
);

t.test('clibroker/testing by its package name: real curl through a routed broker to the mock', async (t) => {
  const out = await inConsumer(`
    import { execFile } from 'node:child_process';
    import { promisify } from 'node:util';
    import { createBroker } from 'clibroker';
    import { childEnv, routeToMock, startMockVendor } from 'clibroker/testing';
    const mock = await startMockVendor({ shape: 'generic' });
    const broker = await createBroker({ upstream: routeToMock(mock) });
    const session = broker.openSession({ egress: ['api.example.com'] });
    const env = { ...childEnv(session), PATH: '/usr/bin:/bin' };
    // Not execFileSync: the broker runs in this process and must keep serving while curl runs.
    const { stdout: body } = await promisify(execFile)('curl', ['-sS', '-f', 'https://api.example.com/ping'], { env });
    session.close();
    await broker.close();
    await mock.close();
    console.log(body);
  `);
  t.same(out, { method: 'GET', host: 'api.example.com', path: '/ping', authorization: false });
});

t.test('with better-sqlite3 installed the same consumer opens the store', async (t) => {
  rmSync(join(consumer, 'node_modules', 'better-sqlite3'), { recursive: true, force: true });
  symlinkSync(join(modules, 'better-sqlite3'), join(consumer, 'node_modules', 'better-sqlite3'), 'dir');
  const out = await inConsumer(OPEN_STORE);
  t.same(out['errors'], [null, null], 'both opens succeed');
});
