/**
 * The broker-only install, made the way the README tells a host to: `npm install clibroker`
 * (here the packed tarball) into a fresh project that already has a package with an optional
 * native part (esbuild and its platform binary), and nothing else.
 *
 * - It adds at most 40 packages, none of them native or with an install script: the store
 *   drivers are optional peers, not installed, and the MCP SDK is inlined in the build.
 * - It leaves what the project had as it was (the route uses no flag such as --omit that
 *   would act on the project's other packages).
 * - The library works: the README's quick start runs through a broker and prints what the
 *   README shows; opening a store whose driver is absent fails with the code naming it.
 * - The installed binary needs only its store's driver: without pg it says how to get it;
 *   with pg installed beside it, it migrates a PostgreSQL store, serves it, and answers an MCP
 *   initialize (the SDK inlined) and a Platform API call.
 *
 * The install resolves clibroker's own dependencies from the npm registry (or npm's cache).
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { packedTarball } from '../helpers/packed.js';
import { freshDatabase, pgSkip } from '../helpers/postgres.js';
import { seedDeployment } from '../helpers/seed.js';
import { startProcess } from '../helpers/server-process.js';
import { TOKENS } from '../serve/helpers.js';

t.setTimeout(600_000); // packing builds the package (tsc and esbuild), then npm installs it

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';
const npm = (cwd: string, args: string[]) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd,
    maxBuffer: 64 << 20,
    env: { ...process.env, npm_config_loglevel: 'error' },
  });

/** Every package directory of the project's tree, relative to the project. */
async function tree(project: string): Promise<Set<string>> {
  const { stdout } = await run('npm', ['ls', '--all', '--parseable'], { cwd: project, maxBuffer: 64 << 20 });
  return new Set(
    stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => relative(project, l))
      .filter((l) => l !== ''),
  );
}

const work = mkdtempSync(join(tmpdir(), 'clibroker-broker-only-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

// the package as published: packed from a clean copy (prepare builds it)
const { tarball } = await packedTarball();

// a host's project with a package of its own that has an optional native part
const project = join(work, 'host');
mkdirSync(project);
writeFileSync(
  join(project, 'package.json'),
  JSON.stringify({ name: 'a-host', private: true, type: 'module' }),
);
const esbuildVersion = (
  JSON.parse(readFileSync(join(root, 'node_modules/esbuild/package.json'), 'utf8')) as { version: string }
).version;
await npm(project, ['install', `esbuild@${esbuildVersion}`]);
const before = await tree(project);
await npm(project, ['install', tarball]);
const after = await tree(project);
const added = [...after].filter((p) => !before.has(p));

t.test('npm install clibroker: at most 40 packages, nothing native, the project untouched', async (t) => {
  t.ok(added.includes('node_modules/clibroker'), 'clibroker is installed');
  t.ok(added.length <= 40, `${added.length} packages added (at most 40): ${added.join(', ')}`);
  t.same(
    [...before].filter((p) => !after.has(p)),
    [],
    'every package the project had is still there',
  );
  t.ok(
    existsSync(join(project, `node_modules/@esbuild/linux-${process.arch}`)),
    "esbuild's native part stays",
  );
  for (const peer of ['better-sqlite3', 'pg', '@modelcontextprotocol/sdk'])
    t.notOk(existsSync(join(project, 'node_modules', peer)), `${peer} is not installed`);
  const scripted = added.filter((p) => {
    const pkg = JSON.parse(readFileSync(join(project, p, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    const s = pkg.scripts ?? {};
    return (
      'install' in s || 'preinstall' in s || 'postinstall' in s || existsSync(join(project, p, 'binding.gyp'))
    );
  });
  t.same(scripted, [], 'no added package builds anything or runs an install script');
});

t.test("the README's quick start runs through the broker", async (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /<!-- quick-start:begin[^>]*-->([\s\S]*?)<!-- quick-start:end -->/.exec(readme)?.[1] ?? '';
  const program = /```js\n([\s\S]*?)```/.exec(block)?.[1];
  const output = /```text\n([\s\S]*?)```/.exec(block)?.[1];
  if (program === undefined || output === undefined) throw new Error('README.md has no quick-start block');
  writeFileSync(join(project, 'quick-start.mjs'), program);
  const tmp = mkdtempSync(join(work, 'tmp-'));
  const { stdout } = await run(process.execPath, ['quick-start.mjs'], {
    cwd: project,
    env: { PATH, TMPDIR: tmp },
  });
  t.equal(stdout, output);
  t.same(readdirSync(tmp), [], 'it removes the CA file it wrote');
});

t.test('a store whose optional peer is absent fails with the code that names it', async (t) => {
  writeFileSync(
    join(project, 'stores.mjs'),
    `import { openStore } from 'clibroker';
for (const at of [':memory:', 'postgres://nobody@127.0.0.1:9/none']) {
  try {
    await openStore(at);
    console.log('opened');
  } catch (e) {
    console.log(JSON.stringify({ code: e.code, details: e.details, message: e.message }));
  }
}
`,
  );
  const { stdout } = await run(process.execPath, ['stores.mjs'], { cwd: project, env: { PATH } });
  const [sqlite, postgres] = stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.match(sqlite, {
    code: 'STORE_DRIVER_MISSING',
    details: { driver: 'better-sqlite3', reason: 'absent' },
    message: /npm install better-sqlite3/,
  });
  t.match(postgres, {
    code: 'DEPENDENCY_MISSING',
    details: { package: 'pg' },
    message: /A PostgreSQL store needs pg.*npm install pg/,
  });
});

t.test(
  'the installed binary without better-sqlite3: serve --demo says how to get it, leaves nothing',
  async (t) => {
    const tmp = mkdtempSync(join(work, 'tmp-'));
    const bin = join(project, 'node_modules/.bin/clibroker');
    const r = await run(bin, ['serve', '--demo', '--port', '0'], {
      cwd: project,
      env: { PATH, TMPDIR: tmp },
    }).then(
      () => ({ code: 0, stdout: '' }),
      (e: { code: number; stdout: string }) => e,
    );
    t.equal(r.code, 1);
    t.match(JSON.parse(r.stdout), {
      success: false,
      error: { code: 'STORE_DRIVER_MISSING', message: /npx -p clibroker -p better-sqlite3 clibroker/ },
    });
    t.same(readdirSync(tmp), [], 'the throwaway directory is removed');
  },
);

t.test(
  'the installed binary serves a PostgreSQL store once pg is installed beside it',
  { skip: pgSkip() },
  async (t) => {
    const url = await freshDatabase(t);
    const d = await seedDeployment((c, dir) => ({
      ...c,
      store: { postgres: dir.secret('store-url', url) },
      serve: {
        executorToken: dir.secret('executor', TOKENS.executor),
        mcpToken: dir.secret('mcp', TOKENS.mcp),
      },
    }));
    t.teardown(() => d.close());
    const bin = join(project, 'node_modules/.bin/clibroker');
    const migrate = () =>
      run(bin, ['store', 'migrate', '--config', d.file], { cwd: project, env: { PATH } }).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (e: { code: number; stdout: string }) => e,
      );
    const without = await migrate();
    t.equal(without.code, 1, 'without pg: refused');
    t.match(JSON.parse(without.stdout), {
      success: false,
      error: { code: 'DEPENDENCY_MISSING', message: /npx -p clibroker -p pg clibroker/ },
    });
    const pgVersion = (
      JSON.parse(readFileSync(join(root, 'node_modules/pg/package.json'), 'utf8')) as { version: string }
    ).version;
    await npm(project, ['install', `pg@${pgVersion}`]);
    const migrated = await migrate();
    t.match(JSON.parse(migrated.stdout), { success: true }, 'with pg: migrated');

    const serve = startProcess(t, bin, ['serve', '--config', d.file, '--port', '0'], {
      cwd: project,
      env: { PATH },
    });
    const listening = JSON.parse((await serve.until(/\n/)).split('\n')[0]!) as { url: string };

    const init = await fetch(`${listening.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKENS.mcp}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'test', version: '1' },
        },
      }),
    });
    const text = await init.text();
    t.equal(init.status, 200, text);
    t.match(text, /"serverInfo":\{"name":"clibroker",/, 'the MCP SDK inlined in the bundle answers');

    const call = await fetch(`${listening.url}/v1/tools/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.executor}`, 'content-type': 'application/json' },
      body: JSON.stringify({ toolId: 'gh_cli', input: { args: ['api', 'user'] } }),
    });
    const body = await call.text();
    t.match(JSON.parse(body), { ok: true, result: { exitCode: 0 } }, body);

    serve.child.kill('SIGTERM');
    const code = await serve.exited;
    t.equal(code, 0, code === 0 ? 'serve stops on SIGTERM with exit 0' : serve.err());
  },
);
