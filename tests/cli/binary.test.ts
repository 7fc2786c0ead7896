import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import t from 'tap';
import { isErrorCode } from '../../src/errors.js';
import { buildBinary, spawnBin } from './fixtures/helpers.js';

// The real bundled program (bin/clibroker.js + the esbuild bundle), spawned as agents run it.
const { bin, startupImports, startupInputs } = await buildBinary();
// The same factory and node io with the test tools: the only way to reach `auth` until a
// bundled command has a credential behind it (docs/cli.md lists what is missing).
const { bin: fixture } = await buildBinary('tests/cli/fixtures/test-cli.ts');
t.teardown(() => {
  for (const b of [bin, fixture]) rmSync(dirname(dirname(b)), { recursive: true, force: true });
});

// type (and what it is about) → [program, argv, exit code, the envelope's error.code]
const errorTypes: Record<string, [string, string[], number, string]> = {
  'flag-parse': [bin, ['policy', 'classify', '--method', 'GET', '--url'], 1, 'COMMAND_INPUT_INVALID'],
  'json-parse': [
    bin,
    ['policy', 'classify', '--method', 'POST', '--url', '/x', '--overrides', '{bad'],
    1,
    'COMMAND_INPUT_INVALID',
  ],
  'missing-required': [bin, ['policy', 'classify', '--url', '/x'], 1, 'COMMAND_INPUT_INVALID'],
  'enum-mismatch': [bin, ['agent', 'manifest', '--format', 'xml'], 1, 'COMMAND_INPUT_INVALID'],
  'unknown-flag': [bin, ['policy', 'classify', '--metod', 'GET'], 1, 'COMMAND_INPUT_INVALID'],
  'unknown-command': [bin, ['polcy', 'classify'], 2, 'COMMAND_UNKNOWN'],
  'flag-parse (a value)': [
    bin,
    ['policy', 'classify', '--method', 'GET', '--url', 'not a url'],
    1,
    'COMMAND_INPUT_INVALID',
  ],
  runtime: [bin, ['audit', 'query', '--store', '/nonexistent/clibroker/store.db'], 1, 'STORE_NOT_FOUND'],
  auth: [
    fixture,
    ['review', 'submit', '--pr', '401', '--event', 'APPROVE'],
    1,
    'CREDENTIAL_TOKEN_MINT_FAILED',
  ],
};

t.test(
  'every error type through a spawned binary: envelope on stdout, one line on stderr, exit code',
  async (t) => {
    t.plan(Object.keys(errorTypes).length * 5);
    for (const [label, [prog, argv, code, errorCode]] of Object.entries(errorTypes)) {
      const type = label.split(' ')[0]!;
      const r = spawnBin(prog, argv);
      t.equal(r.code, code, `${type}: exit ${code}`);
      t.match(
        r.env,
        { success: false, error: { type, message: String, code: errorCode } },
        `${type}: envelope`,
      );
      const got = r.env?.success === false ? r.env.error.code : undefined;
      t.ok(got !== undefined && isErrorCode(got), `${type}: error.code ${got} is in the catalogue`);
      t.equal(r.stdout.trim().split('\n').length, 1, `${type}: one JSON line on stdout`);
      t.match(r.stderr, new RegExp(`^clibroker: ${type}[^\\n]*\\n$`), `${type}: one prose line on stderr`);
    }
  },
);

t.test('success envelope from the real back-end, with stdin piped through --body-file -', async (t) => {
  const body = JSON.stringify({
    query: 'mutation { addStar(input: {starrableId: "x"}) { clientMutationId } }',
  });
  const r = spawnBin(
    bin,
    [
      'policy',
      'classify',
      '--method',
      'POST',
      '--url',
      'https://api.github.com/graphql',
      '--header',
      'content-type: application/json',
      '--body-file',
      '-',
    ],
    body,
  );
  t.equal(r.code, 0, r.stderr);
  t.match(r.env, {
    success: true,
    data: { class: 'write', graphql: { operations: [{ type: 'mutation', rootFields: ['addStar'] }] } },
  });
  t.equal(r.stderr, '');
});

t.test('two stdin consumers through the binary', async (t) => {
  const r = spawnBin(
    fixture,
    ['review', 'submit', '--pr', '1', '--event', 'APPROVE', '--body-file', '-', '--comments-file', '-'],
    'x',
  );
  t.equal(r.code, 1);
  t.match(r.env, { error: { type: 'flag-parse', flag: 'body-file,comments-file' } });
});

t.test('help is text on stdout with exit 0', async (t) => {
  const root = spawnBin(bin, ['--help']);
  t.equal(root.code, 0);
  t.match(root.stdout, /policy classify/);
  const cmd = spawnBin(bin, ['policy', 'classify', '--help']);
  t.equal(cmd.code, 0);
  t.match(
    cmd.stdout,
    /\nEXAMPLES\n {2}# a DELETE is destructive\n {2}clibroker policy classify --method DELETE/,
  );
});

t.test('the manifest command lists the bundled tools', async (t) => {
  const r = spawnBin(bin, ['agent', 'manifest', '--format', 'anthropic']);
  t.equal(r.code, 0);
  const names = (r.env as { data: { name: string }[] }).data.map((d) => d.name);
  t.same(names, ['run', 'resume', 'policy_classify'], 'an allowlist: the thin client and the policy dry-run');
  t.notOk(
    names.some((n) =>
      [
        'vendor_run',
        'vendor_resume',
        'approvals_list',
        'approvals_approve',
        'approvals_reject',
        'tiers_set',
        'config_validate',
        'daemon',
      ].includes(n),
    ),
    'no command that takes a manifest, reads the store, decides for a person or belongs to the operator',
  );
  t.match(r.env, { success: true, data: [{ name: 'run', input_schema: { type: 'object' } }] });
});

const notesOf = (r: { env?: unknown }) =>
  (r.env as { data: { notes: { path: string; note: string }[] } }).data.notes;

t.test('manifest validate lists every problem from the real back-end', async (t) => {
  const ext = {
    id: 'x',
    egress: ['API.github.com'],
    clis: [{ id: 'gh', binary: { image: 'node', entrypoint: 'gh' }, env: { PATH: 'x' } }],
  };
  const r = spawnBin(bin, ['manifest', 'validate', '--manifest-file', '-'], JSON.stringify(ext));
  t.equal(r.code, 0, r.stderr);
  t.match(r.env, {
    success: true,
    data: {
      valid: false,
      problems: [
        { code: 'MANIFEST_EGRESS_HOST_NOT_DNS', path: 'egress[0]' },
        { path: 'clis[0].env.PATH' },
        {},
      ],
    },
  });
  const good = spawnBin(bin, [
    'manifest',
    'validate',
    '--kind',
    'cli',
    '--manifest',
    '{"id":"gh","binary":{"image":"node","entrypoint":"gh"}}',
  ]);
  t.match(good.env, { success: true, data: { valid: true, problems: [] } });
  t.match(notesOf(good), [
    {
      path: 'binary.image',
      note: /^"node" is an image name, not a sandbox profile .*createRunner without RunInput\.image refuses it$/,
    },
  ]);
  t.equal(notesOf(good).length, 1, 'a valid manifest still says which CLIs need a pinned image');

  const profiles = {
    id: 'x',
    egress: ['api.github.com'],
    toolkits: { github: { credential: 'auth.default' } },
    clis: [
      { id: 'gh', binary: { image: 'isolated', entrypoint: 'gh' } },
      { id: 'az', binary: { image: 'azure-cli', entrypoint: 'az' } },
      { id: 'curl', binary: { image: 'plain', entrypoint: 'curl' } },
    ],
  };
  const mixed = spawnBin(bin, ['manifest', 'validate', '--manifest-file', '-'], JSON.stringify(profiles));
  t.match(mixed.env, { success: true, data: { valid: true, problems: [] } });
  t.same(
    notesOf(mixed).map((n) => n.path),
    ['clis[1].binary.image'],
    'only the CLI naming an image, not a profile, gets a note',
  );
});

t.test('the cold-start path loads no package and no back-end (they are dynamic imports)', async (t) => {
  const external = startupImports.filter((p) => !p.includes('/chunks/') && !p.startsWith('node:'));
  t.same(external, [], 'only node: builtins and our own chunks load before the first dynamic import');
  // secret-shape is the pure redactor every envelope's `got` goes through (no imports of its own);
  // the example manifests are plain data `vendor run`'s examples show (they import only types)
  // the commands' back-ends sit beside their definitions in src/commands, loaded by `run` only
  const BACK_ENDS =
    /(^|\/)src\/commands\/(approval-decide|audit-chain|connection|daemon-call|engine|mutation|run-spec|serve-demo|store-flag|vendor-run)\.ts$/;
  const backEnds = startupInputs.filter(
    (f) =>
      BACK_ENDS.test(f) ||
      !/(^|\/)src\/(cli\/|commands\/|errors\.ts|error-catalogue\.ts|error-messages\.ts|audit\/secret-shape\.ts|manifest\/examples\.ts)/.test(
        f,
      ),
  );
  t.same(
    backEnds,
    [],
    "only the CLI framework, the commands' definitions, the error catalogue and the secret redactor are in the startup chunks",
  );
  t.ok(
    startupInputs.some((f) => f.endsWith('src/cli/route.ts')),
    'the inputs list is real',
  );
});
