/**
 * The steps of a configuration load, each alone: reading the file, the load's shared
 * context (paths, secret checks), the images, an extension and its CLIs, settling the tool
 * names, each service block, the refusal and the hidden real paths. The whole load is
 * tested in load.test.ts, problems.test.ts and their neighbours.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { CliCandidate } from '../../src/config/clis.js';
import { cliCandidates, installExtension, pinImages, settleTools } from '../../src/config/load-clis.js';
import { type Load, startLoad } from '../../src/config/load-context.js';
import {
  refusePlainImages,
  resolveAuditOtlp,
  resolveDaemon,
  resolveServe,
  resolveStore,
  resolveUpstream,
} from '../../src/config/load-services.js';
import { configOrigin, hideRealPaths, readConfigFile, refuseIfAnyProblem } from '../../src/config/load.js';
import type { ConfigProblem } from '../../src/config/types.js';
import { type Fixture, makeFixture, rejection } from './fixtures.js';

const STRONG = 'f3a9c1d27be84e6a90c5d1f7e2b3a4c8';

/** A load of the fixture's configuration as an object, relative paths from its directory. */
function loadOf(f: Fixture, opts: { readSecrets?: boolean } = {}): Load {
  return startLoad(f.config, configOrigin(undefined, { baseDir: f.dir }), { env: f.env, ...opts });
}
const codes = (load: Load) => load.out.items.map((p) => `${p.code} ${p.path}`);

t.test('configOrigin: a file resolves from its directory, an object from the base directory', async (t) => {
  t.plan(2);
  t.same(configOrigin('/etc/cb/config.json'), {
    file: '/etc/cb/config.json',
    base: '/etc/cb',
    what: 'the configuration /etc/cb/config.json',
  });
  t.same(configOrigin(undefined, { baseDir: '/srv' }), {
    file: undefined,
    base: '/srv',
    what: 'the configuration',
  });
});

t.test(
  'readConfigFile: JSON parsed; a syntax error placed by line and column; a missing file named',
  async (t) => {
    t.plan(4);
    const f = makeFixture(t);
    const good = join(f.dir, 'good.json');
    writeFileSync(good, '{"version": 1}');
    t.same(await readConfigFile(good), { version: 1 });
    const bad = join(f.dir, 'bad.json');
    writeFileSync(bad, '{\n  "version": 1,\n}');
    const e = await rejection(readConfigFile(bad));
    t.equal(e.code, 'CONFIG_INVALID');
    t.match(
      (e.details as { problems: ConfigProblem[] }).problems[0]!.message,
      /is not JSON \(a syntax error at line 3, column 1/,
    );
    const gone = await rejection(readConfigFile(join(f.dir, 'none.json')));
    t.match(
      (gone.details as { problems: ConfigProblem[] }).problems[0]!.message,
      /cannot read the configuration file .*none\.json \(ENOENT\)/,
    );
  },
);

t.test(
  'startLoad: paths from the base, a secret file hidden, a missing or weak secret a problem',
  async (t) => {
    t.plan(7);
    const f = makeFixture(t);
    const load = loadOf(f);
    t.equal(load.abs('x/y'), join(f.dir, 'x/y'));
    t.equal(load.abs('/abs'), '/abs');
    await load.checkRef({ file: join(f.dir, 'jira.secret') }, ['a']);
    t.same(
      [[...load.hidden], codes(load)],
      [[join(f.dir, 'jira.secret')], []],
      'present: hidden, no problem',
    );
    await load.checkRef({ env: 'NOT_SET' }, ['b', 0]);
    f.env['WEAK'] = 'password';
    await load.checkRef({ env: 'WEAK' }, ['c'], true);
    t.same(codes(load), ['CONFIG_SECRET_MISSING b[0]', 'CONFIG_SECRET_WEAK c']);
    const lenient = loadOf(f, { readSecrets: false });
    await lenient.checkRef({ file: join(f.dir, 'nope') }, ['d']);
    t.same(
      [[...lenient.hidden], codes(lenient)],
      [[join(f.dir, 'nope')], []],
      'not read: hidden, no problem',
    );
    const fromFile = startLoad([], configOrigin('/etc/cb/c.json'), {});
    t.same(
      [fromFile.cfg, [...fromFile.hidden]],
      [{}, ['/etc/cb/c.json']],
      'not an object: empty, the file hidden',
    );
    t.equal(fromFile.env, process.env);
  },
);

t.test('pinImages: an image pinned when its file hashes to its pin, gated by conformance', async (t) => {
  t.plan(5);
  const f = makeFixture(t);
  f.config.images.gh.sha256 = 'a'.repeat(64);
  f.config.images.base.conformance = 'required';
  delete f.config.images['azure-cli'].executable;
  const load = loadOf(f);
  const images = await pinImages(load);
  t.same([...images.pinned.keys()], ['base'], 'the bad hash and the malformed image are not pinned');
  t.same([...images.configs.keys()], ['gh', 'base'], 'the well-formed ones are checked');
  t.same(codes(load), ['CONFIG_IMAGE_HASH_MISMATCH images.gh.sha256']);
  t.equal(images.pinned.get('base')!.conformance, 'required');
  delete f.config.conformance;
  delete f.config.images.base.conformance;
  const strict = await pinImages(loadOf(f));
  t.equal(strict.pinned.get('base')!.conformance, 'required', 'required unless the configuration waives it');
});

t.test(
  'installExtension: secrets checked and the manifest hashed, installed only when all is well',
  async (t) => {
    t.plan(6);
    const f = makeFixture(t);
    const load = loadOf(f);
    const gh = await installExtension(load, 'github', f.config.extensions.github);
    t.same(
      [gh?.id, gh?.endpoint, gh?.identity, gh?.assignment],
      ['github', 'https://ghe.acme.example', 'assigned', 'default'],
    );
    t.same(codes(load), []);
    const jira = await installExtension(load, 'atlassian', f.config.extensions.atlassian);
    t.same([...load.hidden], [join(f.dir, 'jira.secret')], "the connection's secret file hidden");
    t.ok(jira);
    f.config.extensions.azure.sha256 = 'b'.repeat(64);
    delete f.env['GH_SECRET'];
    await installExtension(load, 'azure', f.config.extensions.azure);
    delete f.config.extensions.atlassian.connection;
    t.equal(
      await installExtension(load, 'atlassian', f.config.extensions.atlassian),
      undefined,
      'no connection',
    );
    await installExtension(load, 'github', f.config.extensions.github);
    t.same(codes(load), [
      'CONFIG_MANIFEST_HASH_MISMATCH extensions.azure.sha256',
      'CONFIG_SECRET_MISSING extensions.github.connection.accessToken',
    ]);
  },
);

t.test("cliCandidates: each CLI checked against the images, a disabled toolkit's marked", async (t) => {
  t.plan(3);
  const f = makeFixture(t);
  const load = loadOf(f);
  const images = await pinImages(load);
  const gh = (await installExtension(load, 'github', f.config.extensions.github))!;
  const [ok] = cliCandidates(load, gh, {}, images);
  t.same([ok!.id, ok!.problems, ok!.disabledToolkit], ['github:cli:gh', [], undefined]);
  const toolkit = Object.keys(gh.manifest.toolkits ?? {})[0]!;
  const [off] = cliCandidates(load, gh, { toolkits: { [toolkit]: { enabled: false } } }, images);
  t.equal(off!.disabledToolkit, toolkit);
  const noImages = { pinned: new Map(), configs: new Map() };
  const [unpinned] = cliCandidates(startLoad({}, configOrigin(undefined), {}), gh, {}, noImages);
  t.same(
    unpinned!.problems.map((p) => p.code),
    ['CONFIG_IMAGE_UNKNOWN'],
  );
});

t.test(
  'settleTools: offered, withheld with every code named, or withheld by a disabled toolkit',
  async (t) => {
    t.plan(4);
    const problem = (code: string): ConfigProblem =>
      ({ code, path: 'p', message: `m ${code}` }) as ConfigProblem;
    const cand = (
      cliId: string,
      problems: ConfigProblem[],
      more: Partial<CliCandidate> = {},
    ): CliCandidate => ({
      id: `x:cli:${cliId}`,
      extensionId: 'x',
      cliId,
      at: ['extensions', 'x', 'manifest', 'clis', 0],
      problems,
      ...(problems.length === 0 ? { tool: { id: `x:cli:${cliId}` } as never } : {}),
      ...more,
    });
    const settled = settleTools(
      [
        cand('a', []),
        cand('b', [problem('CONFIG_CLI_NOT_RUNNABLE'), problem('CONFIG_IMAGE_UNKNOWN')]),
        cand('c', [problem('CONFIG_IMAGE_UNKNOWN')], { disabledToolkit: 'tk' }),
      ],
      false,
    );
    t.same(
      settled.tools.map((x) => [x.id, x.name]),
      [['x:cli:a', 'a_cli']],
    );
    t.same(settled.withheld[0], {
      id: 'x:cli:b',
      name: 'b_cli',
      code: 'CONFIG_CLI_NOT_RUNNABLE',
      message: 'm CONFIG_CLI_NOT_RUNNABLE (also CONFIG_IMAGE_UNKNOWN)',
      path: 'p',
    });
    t.same(settled.withheld[1], {
      id: 'x:cli:c',
      name: 'c_cli',
      code: 'TOOL_VENDOR_CLI_TOOLKIT_DISABLED',
      path: 'extensions.x.toolkits.tk.enabled',
      message:
        'the CLI c belongs to the toolkit "tk", which the configuration disables; set extensions.x.toolkits.tk.enabled to true to offer it (also CONFIG_IMAGE_UNKNOWN)',
    });
    t.same(
      settled.perTool.map((p) => p.code),
      ['CONFIG_CLI_NOT_RUNNABLE', 'CONFIG_IMAGE_UNKNOWN', 'CONFIG_IMAGE_UNKNOWN'],
    );
  },
);

t.test('resolveStore: a SQLite file and its companions hidden, :memory:, PostgreSQL by secret', async (t) => {
  t.plan(6);
  const f = makeFixture(t);
  const load = loadOf(f);
  const sqlite = await resolveStore(load);
  const db = join(f.dir, 'store.db');
  t.same([sqlite.store, sqlite.storePostgres], [db, undefined]);
  t.same([...load.hidden], [db, `${db}-wal`, `${db}-shm`, `${db}-journal`, `${db}.runs`]);
  f.config.store = ':memory:';
  const memory = loadOf(f);
  t.same([(await resolveStore(memory)).store, [...memory.hidden]], [':memory:', []]);
  f.config.store = { postgres: { env: 'PG' }, poolSize: 3 };
  f.env['PG'] = 'postgres://u@db/cb';
  const pg = await resolveStore(loadOf(f));
  t.same(pg, {
    store: 'postgres (URL in env PG)',
    storePostgres: { url: { env: 'PG' }, poolSize: 3, reconnectWindowMs: 10_000 },
  });
  delete f.env['PG'];
  const missing = loadOf(f);
  await resolveStore(missing);
  t.same(codes(missing), ['CONFIG_SECRET_MISSING store.postgres']);
  f.config.store = 42;
  t.equal((await resolveStore(loadOf(f))).store, '', 'malformed: no store (the shape problem says why)');
});

t.test('resolveDaemon: its defaults, its socket hidden, its token checked', async (t) => {
  t.plan(4);
  const f = makeFixture(t);
  const load = loadOf(f);
  t.same(await resolveDaemon(load), {
    socket: join(f.dir, 'daemon.sock'),
    socketMode: '0660',
    cliTier: 'read',
    context: 'agent-step',
    executorToken: { file: join(f.dir, 'executor.token') },
  });
  t.same([...load.hidden], [join(f.dir, 'daemon.sock'), join(f.dir, 'executor.token')]);
  f.config.daemon.executorToken = { env: 'NONE' };
  const missing = loadOf(f);
  await resolveDaemon(missing);
  t.same(codes(missing), ['CONFIG_SECRET_MISSING daemon.executorToken']);
  delete f.config.daemon;
  t.equal(await resolveDaemon(loadOf(f)), undefined);
});

t.test(
  'refusePlainImages: a plain image only where a daemon or server serves the configuration',
  async (t) => {
    t.plan(3);
    const f = makeFixture(t);
    const configs = new Map([
      ['gh', { profile: 'isolated' as const }],
      ['base', { profile: 'plain' as const }],
    ]);
    const daemon = loadOf(f);
    refusePlainImages(daemon, configs, false);
    t.same(codes(daemon), ['CONFIG_IMAGE_PLAIN_UNDER_DAEMON images.base.profile']);
    delete f.config.daemon;
    const serving = loadOf(f);
    refusePlainImages(serving, configs, true);
    t.same(codes(serving), ['CONFIG_IMAGE_PLAIN_UNDER_DAEMON images.base.profile']);
    const local = loadOf(f);
    refusePlainImages(local, configs, undefined);
    t.same(codes(local), []);
  },
);

t.test("resolveServe: defaults, the daemon's tier and context, tokens checked", async (t) => {
  t.plan(4);
  const f = makeFixture(t);
  const plain = await resolveServe(loadOf(f), undefined);
  t.same(plain.serve, {
    host: '127.0.0.1',
    port: 8787,
    approvalTimeoutMs: 600_000,
    cliTier: 'read',
    context: 'agent-step',
    executorMaxTier: 'read',
    reviewSessionIdleMs: 1_800_000,
    reviewSessionMaxMs: 43_200_000,
  });
  f.config.serve = {
    publicUrl: 'https://cb.example/',
    mcpToken: { env: 'MCP' },
    reviewers: { ann: { env: 'ANN' } },
  };
  f.env['MCP'] = STRONG;
  const load = loadOf(f);
  const daemon = { socket: '/s', socketMode: '0660', cliTier: 'write', context: 'chat' } as const;
  const { serve, refs } = await resolveServe(load, daemon);
  t.same([serve.publicUrl, serve.cliTier, serve.context], ['https://cb.example', 'write', 'chat']);
  t.same(refs, { mcp: { env: 'MCP' }, reviewers: [['ann', { env: 'ANN' }]] });
  t.same(codes(load), ['CONFIG_SECRET_MISSING serve.reviewers.ann']);
});

t.test('resolveUpstream: the CA bundle read now, and refused when unreadable or no PEM', async (t) => {
  t.plan(5);
  const f = makeFixture(t);
  const plain = await resolveUpstream(loadOf(f));
  t.same(
    [[...plain!.connectTo.keys()], plain!.allowAddresses, plain!.caPem],
    [['api.github.com'], ['127.0.0.0/8'], undefined],
  );
  f.config.upstream.caFile = 'ca.pem';
  const missing = loadOf(f);
  await resolveUpstream(missing);
  t.same(codes(missing), ['CONFIG_FIELD_INVALID upstream.caFile']);
  writeFileSync(join(f.dir, 'ca.pem'), 'hello');
  const notPem = loadOf(f);
  await resolveUpstream(notPem);
  t.match(notPem.out.items[0]!.message, /holds no PEM certificate/);
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  writeFileSync(join(f.dir, 'ca.pem'), pem);
  t.equal((await resolveUpstream(loadOf(f)))!.caPem, pem);
  delete f.config.upstream;
  t.equal(await resolveUpstream(loadOf(f)), undefined);
});

t.test('resolveAuditOtlp: defaults, header secrets checked now and read at each push', async (t) => {
  t.plan(4);
  const f = makeFixture(t);
  t.equal(await resolveAuditOtlp(loadOf(f)), undefined, 'no audit block');
  f.config.audit = {
    otlp: { endpoint: 'https://otel.example/v1/logs', headers: { authorization: { env: 'OT' } } },
  };
  const missing = loadOf(f);
  await resolveAuditOtlp(missing);
  t.same(codes(missing), ['CONFIG_SECRET_MISSING audit.otlp.headers.authorization']);
  f.env['OT'] = 'Bearer one';
  const otlp = (await resolveAuditOtlp(loadOf(f)))!;
  t.same([otlp.batchSize, otlp.headers], [512, { authorization: { env: 'OT' } }]);
  f.env['OT'] = 'Bearer two';
  t.same(await otlp.readHeaders(), { authorization: 'Bearer two' }, 'read again at the push');
});

t.test("refuseIfAnyProblem: every problem listed; a CLI's own only withhold it, unless strict", async (t) => {
  t.plan(5);
  const f = makeFixture(t);
  const origin = configOrigin(undefined);
  const own: ConfigProblem = { code: 'CONFIG_CLI_NOT_RUNNABLE', path: 'p', message: 'm' };
  const settled = { tools: [], withheld: [], perTool: [own] };
  t.doesNotThrow(() => refuseIfAnyProblem(loadOf(f), origin, settled, false), 'not strict: withheld only');
  const strict = await rejection((async () => refuseIfAnyProblem(loadOf(f), origin, settled, true))());
  t.equal(strict.code, 'CONFIG_INVALID');
  t.same((strict.details as { problems: ConfigProblem[] }).problems, [own]);
  const load = loadOf(f);
  load.out.add('CONFIG_FIELD_INVALID', ['x'], 'bad');
  const both = await rejection((async () => refuseIfAnyProblem(load, origin, settled, false))());
  t.same(
    (both.details as { problems: ConfigProblem[] }).problems.map((p) => p.code),
    ['CONFIG_FIELD_INVALID', 'CONFIG_CLI_NOT_RUNNABLE'],
    'refused anyway: the withheld CLIs listed too',
  );
  t.match(both.message, /the configuration/);
});

t.test('hideRealPaths: a path through a symbolic link hidden under both names', async (t) => {
  t.plan(1);
  const f = makeFixture(t);
  mkdirSync(join(f.dir, 'real'));
  writeFileSync(join(f.dir, 'real', 's'), 'x');
  symlinkSync(join(f.dir, 'real', 's'), join(f.dir, 'link'));
  const hidden = new Set([join(f.dir, 'link'), join(f.dir, 'gone')]);
  await hideRealPaths(hidden);
  t.same([...hidden], [join(f.dir, 'link'), join(f.dir, 'gone'), join(f.dir, 'real', 's')]);
});
