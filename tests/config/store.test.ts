/**
 * The `store` field's forms, through the real bundled program an operator runs
 * (`clibroker config validate`, `clibroker serve`) and through `loadConfig`:
 *
 *   "store": "<path>" | ":memory:"                      SQLite
 *   "store": {"postgres": {"env"|"file": …}, …}          PostgreSQL, the URL a secret reference
 *   "store": "postgres://…", "mysql://…", "file:x", …    refused, never a file named after it
 *
 * Nothing here needs a PostgreSQL server: the database itself is tried in
 * tests/store/config-postgres.test.ts.
 */
import { chmodSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { buildBinary, spawnWith } from '../cli/fixtures/helpers.js';
import { makeFixture } from './fixtures.js';

const { bin } = await buildBinary();
t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));

/** Every file under `dir`, recursively, as relative paths. */
const files = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();

const PASSWORD = 'pw-never-shown-27182818';

const refused: [store: string, code: string, message: RegExp, secret?: string][] = [
  [
    `postgres://broker:${PASSWORD}@db.example:5432/clibroker`,
    'CONFIG_SECRET_INLINE',
    /PostgreSQL URL with its password .*not shown.*\{"postgres": \{"env"/,
    PASSWORD,
  ],
  [
    `postgresql://broker@db.example/clibroker?sslmode=require&password=${PASSWORD}`,
    'CONFIG_SECRET_INLINE',
    /not shown/,
    PASSWORD,
  ],
  [
    `postgres://broker@db.example/clibroker?sslpassword=${PASSWORD}`,
    'CONFIG_SECRET_INLINE',
    /not shown/,
    PASSWORD,
  ],
  [
    'postgres://broker@db.example.internal/clibroker',
    'CONFIG_FIELD_INVALID',
    /PostgreSQL URL \(not shown\).*\{"postgres": \{"env": "NAME"\}\}/,
    'db.example.internal',
  ],
  [
    `mysql://broker:${PASSWORD}@db.example/clibroker`,
    'CONFIG_FIELD_INVALID',
    /not a supported store/,
    PASSWORD,
  ],
  ['postgres:/x', 'CONFIG_FIELD_INVALID', /not a supported store/],
  ['sqlite://store.db', 'CONFIG_FIELD_INVALID', /not a supported store/],
  ['file:store.db', 'CONFIG_FIELD_INVALID', /not a supported store/],
  ['https://db.example/store', 'CONFIG_FIELD_INVALID', /not a supported store/],
];

t.test('a URL (or any scheme) as the store is refused, never shown, and no file is created', async (t) => {
  for (const [store, code, message, secret] of refused) {
    const f = makeFixture(t);
    f.config.store = store;
    const file = f.write();
    const before = files(f.dir);
    const r = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
    t.equal(r.code, 1, `${code}: exit 1`);
    t.match(
      r.env,
      {
        success: false,
        error: { code: 'CONFIG_INVALID', details: { problems: [{ code, path: 'store', message }] } },
      },
      code,
    );
    const problems = (r.env as unknown as { error: { details: { problems: { path: string }[] } } }).error
      .details.problems;
    t.same(
      problems.map((p) => p.path),
      ['store'],
      'the store is the only problem',
    );
    if (secret) t.notOk(r.stdout.includes(secret) || r.stderr.includes(secret), 'the value is never shown');
    t.notOk(r.stdout.includes(store) || r.stderr.includes(store), 'the string itself is never echoed');
    // the server an operator would start next refuses it too: it loads the same configuration
    const serve = spawnWith(bin, ['serve', '--config', file, '--port', '0'], {
      env: { GH_SECRET: f.secrets.gh },
    });
    t.not(serve.code, 0, 'clibroker serve refuses to start');
    t.match(serve.stdout + serve.stderr, /CONFIG_INVALID/);
    if (secret)
      t.notOk(serve.stdout.includes(secret) || serve.stderr.includes(secret), 'serve never shows it');
    t.same(files(f.dir), before, 'no file was created, none named after the URL');
  }
});

t.test('a path with a colon is a path; :memory: is the in-memory store', async (t) => {
  for (const store of ['./a:b.db', ':memory:']) {
    const f = makeFixture(t);
    f.config.store = store;
    const file = f.write();
    const r = spawnWith(bin, ['config', 'validate', '--config', file], { env: { GH_SECRET: f.secrets.gh } });
    t.equal(r.code, 0, r.stdout);
  }
});

t.test('the PostgreSQL form: the URL is a secret reference, checked like every secret', async (t) => {
  const f = makeFixture(t);
  // a server nobody listens on, tried without waiting: what is left is the database itself
  const url = `postgres://broker:${PASSWORD}@127.0.0.1:1/clibroker`;
  const validate = (env: Record<string, string> = {}) =>
    spawnWith(bin, ['config', 'validate', '--config', f.write()], {
      env: { GH_SECRET: f.secrets.gh, ...env },
    });
  const paths = (r: ReturnType<typeof validate>) =>
    (
      r.env as { error?: { details: { problems: { code: string; path: string }[] } } }
    ).error?.details.problems.map((p) => `${p.path} ${p.code}`);
  const noSecret = (r: ReturnType<typeof validate>) =>
    t.notOk(r.stdout.includes(PASSWORD) || r.stderr.includes(PASSWORD), 'the password is never shown');

  f.config.store = { postgres: { env: 'CLIBROKER_STORE_URL' }, reconnectWindowSeconds: 0 };
  let r = validate({ CLIBROKER_STORE_URL: url });
  // the configuration is accepted: only opening the database fails, with the store's own code
  t.same(
    paths(r),
    ['store STORE_UNAVAILABLE'],
    'env: accepted, then the database is tried as the daemon opens it',
  );
  noSecret(r);

  r = validate();
  t.same(paths(r), ['store.postgres CONFIG_SECRET_MISSING'], 'an unset variable refuses the load');
  t.match(r.stdout, /CLIBROKER_STORE_URL is not set/);

  writeFileSync(join(f.dir, 'store.url'), `${url}\n`, { mode: 0o600 });
  f.config.store = { postgres: { file: 'store.url' }, poolSize: 4, reconnectWindowSeconds: 0 };
  r = validate();
  t.same(paths(r), ['store STORE_UNAVAILABLE'], 'file 0600, relative to the configuration: accepted');
  noSecret(r);

  chmodSync(join(f.dir, 'store.url'), 0o644);
  r = validate();
  t.same(paths(r), ['store.postgres CONFIG_SECRET_FILE_MODE'], 'a file others can read refuses the load');
  t.match(r.stdout, /mode 0644/);
  noSecret(r);
  chmodSync(join(f.dir, 'store.url'), 0o600);

  f.config.store = { postgres: url };
  r = validate();
  t.same(paths(r), ['store.postgres CONFIG_SECRET_INLINE'], 'the URL written in place of the reference');
  noSecret(r);

  f.config.store = { postgres: { env: 'CLIBROKER_STORE_URL' }, poolSize: 0, reconnectWindowSeconds: 301 };
  r = validate({ CLIBROKER_STORE_URL: url });
  t.same(
    paths(r)?.sort(),
    ['store.poolSize CONFIG_FIELD_INVALID', 'store.reconnectWindowSeconds CONFIG_FIELD_INVALID'],
    'poolSize 1..100, reconnectWindowSeconds 0..300',
  );
  t.same(
    readdirSync(f.dir).filter((n) => n.includes('postgres') || n.includes('store.db')),
    [],
    'no file created',
  );
});

t.test(
  'LoadedConfig: storePostgres with its defaults, a store that never holds the URL, the file hidden',
  async (t) => {
    const f = makeFixture(t);
    const url = `postgres://broker:${PASSWORD}@db.example/clibroker`;
    f.config.store = { postgres: { env: 'CLIBROKER_STORE_URL' } };
    f.config.storeRetention = { days: 30 };
    let c = await loadConfig(f.write(), { env: { ...f.env, CLIBROKER_STORE_URL: url } });
    t.same(c.storePostgres, { url: { env: 'CLIBROKER_STORE_URL' }, poolSize: 10, reconnectWindowMs: 10_000 });
    t.equal(c.store, 'postgres (URL in env CLIBROKER_STORE_URL)');
    t.equal(c.storeRetentionDays, 30, 'storeRetention applies to PostgreSQL too');
    t.notOk(JSON.stringify(c).includes(PASSWORD), 'the URL is not kept: it is read when the store opens');

    writeFileSync(join(f.dir, 'pg.url'), url, { mode: 0o600 });
    f.config.store = { postgres: { file: 'pg.url' }, poolSize: 3, reconnectWindowSeconds: 0 };
    c = await loadConfig(f.write(), { env: f.env });
    t.same(c.storePostgres, { url: { file: join(f.dir, 'pg.url') }, poolSize: 3, reconnectWindowMs: 0 });
    t.ok(
      c.hiddenPaths.includes(join(f.dir, 'pg.url')),
      'the URL file is masked from the CLI like every secret',
    );
    t.notOk(
      c.hiddenPaths.some((p) => p.includes('postgres')),
      'no SQLite side files named after a description',
    );

    f.config.store = 'store.db';
    c = await loadConfig(f.write(), { env: f.env });
    t.equal(c.store, join(f.dir, 'store.db'));
    t.equal(c.storePostgres, undefined);
  },
);

t.test('operator commands with --config read the URL reference with the loader’s rules', async (t) => {
  const f = makeFixture(t);
  const url = `postgres://broker:${PASSWORD}@127.0.0.1:1/clibroker`;
  writeFileSync(join(f.dir, 'store.url'), url, { mode: 0o644 });
  f.config.store = { postgres: { file: 'store.url' }, reconnectWindowSeconds: 0 };
  const file = f.write();
  const loose = spawnWith(bin, ['approvals', 'list', '--config', file]);
  t.equal(loose.code, 1);
  t.match(loose.env, { error: { code: 'CONFIG_SECRET_FILE_MODE', message: /mode 0644/ } });
  t.notOk(loose.stdout.includes(PASSWORD) || loose.stderr.includes(PASSWORD), 'never the URL');

  chmodSync(join(f.dir, 'store.url'), 0o600);
  // read, then tried: nobody listens there, and the answer shows the URL redacted only
  const tried = spawnWith(bin, ['store', 'prune', '--config', file, '--older-than-days', '1']);
  t.equal(tried.code, 1);
  t.match(tried.env, { error: { code: 'STORE_UNAVAILABLE' } });
  t.notOk(tried.stdout.includes(PASSWORD) || tried.stderr.includes(PASSWORD), 'never the password');

  f.config.store = { postgres: { env: 'CLIBROKER_STORE_URL' } };
  f.write();
  const unset = spawnWith(bin, ['audit', 'query', '--config', file]);
  t.not(unset.code, 0);
  t.match(unset.stdout, /CLIBROKER_STORE_URL, which is not set/);
});
