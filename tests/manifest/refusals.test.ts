/**
 * One named case per manifest refusal: each mutates an otherwise valid manifest so that
 * exactly one problem remains, and asserts its reason code and field path. Every case runs
 * through the TypeScript API and the JSON parser.
 */
import t from 'tap';
import { isErrorCode } from '../../src/errors.js';
import {
  type ExtensionManifest,
  type HelpCommand,
  type ManifestProblem,
  defineExtension,
  parseExtensionManifest,
} from '../../src/manifest/index.js';
import { atlassianExtension, azExtension, ghExtension, thrown } from './fixtures.js';
import { SECRET_SAMPLES } from './samples.js';

type Case = {
  base: () => ExtensionManifest;
  mutate: (m: ExtensionManifest) => void;
  code: string;
  path: string;
};

const cli0 = (m: ExtensionManifest) => m.clis[0]!;
const hosts = (n: number, prefix = 'h') => Array.from({ length: n }, (_, i) => `${prefix}${i}.atlassian.net`);
const deepCommand = (depth: number): HelpCommand =>
  depth === 1 ? { name: `c${depth}` } : { name: `c${depth}`, commands: [deepCommand(depth - 1)] };

const cases: Record<string, Case> = {
  'more than 8 CLIs': {
    base: atlassianExtension,
    mutate: (m) => {
      m.clis = Array.from({ length: 9 }, (_, i) => ({ ...cli0(m), id: `curl${i}` }));
    },
    code: 'MANIFEST_TOO_MANY_CLIS',
    path: 'clis',
  },
  'duplicate CLI ids': {
    base: atlassianExtension,
    mutate: (m) => {
      m.clis.push({ ...cli0(m), credentialHosts: [] });
    },
    code: 'MANIFEST_DUPLICATE_CLI_ID',
    path: 'clis[1].id',
  },
  'more than 16 credentialHosts entries': {
    base: atlassianExtension,
    mutate: (m) => {
      m.egress.push(...hosts(17));
      cli0(m).credentialHosts = hosts(17).map((h) => ({ hosts: [h] }));
    },
    code: 'MANIFEST_CREDENTIAL_HOSTS_TOO_MANY',
    path: 'clis[0].credentialHosts',
  },
  'an entry with 0 hosts': {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).credentialHosts!.push({ hosts: [] });
    },
    code: 'MANIFEST_CREDENTIAL_HOSTS_ENTRY_EMPTY',
    path: 'clis[0].credentialHosts[1].hosts',
  },
  'an entry with 17 hosts': {
    base: atlassianExtension,
    mutate: (m) => {
      m.egress.push(...hosts(17));
      cli0(m).credentialHosts!.push({ hosts: hosts(17) });
    },
    code: 'MANIFEST_CREDENTIAL_HOSTS_ENTRY_TOO_MANY_HOSTS',
    path: 'clis[0].credentialHosts[1].hosts',
  },
  'an entry with 9 scopes': {
    base: azExtension,
    mutate: (m) => {
      cli0(m).credentialHosts![0]!.scopes = Array.from({ length: 9 }, (_, i) => `scope.${i}`);
    },
    code: 'MANIFEST_CREDENTIAL_HOSTS_TOO_MANY_SCOPES',
    path: 'clis[0].credentialHosts[0].scopes',
  },
  'an empty scopes list (reads as "no scope", would mean "the connection\'s own credential")': {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).credentialHosts![0]!.scopes = [];
    },
    code: 'MANIFEST_CREDENTIAL_HOSTS_SCOPES_EMPTY',
    path: 'clis[0].credentialHosts[0].scopes',
  },
  'a scope with a space (two scopes to the token endpoint)': {
    base: azExtension,
    mutate: (m) => {
      cli0(m).credentialHosts![0]!.scopes = [
        'https://management.azure.com/.default https://graph.microsoft.com/.default',
      ];
    },
    code: 'MANIFEST_CREDENTIAL_HOSTS_SCOPE_INVALID',
    path: 'clis[0].credentialHosts[0].scopes[0]',
  },
  'a scope with a tab': {
    base: azExtension,
    mutate: (m) => {
      cli0(m).credentialHosts![1]!.scopes = [
        'https://graph.microsoft.com/.default',
        'offline_access\tUser.Read',
      ];
    },
    code: 'MANIFEST_CREDENTIAL_HOSTS_SCOPE_INVALID',
    path: 'clis[0].credentialHosts[1].scopes[1]',
  },
  'a scope with a double quote': {
    base: azExtension,
    mutate: (m) => {
      cli0(m).credentialHosts![0]!.scopes = ['a"b'];
    },
    code: 'MANIFEST_CREDENTIAL_HOSTS_SCOPE_INVALID',
    path: 'clis[0].credentialHosts[0].scopes[0]',
  },
  'a scope with non-ASCII': {
    base: azExtension,
    mutate: (m) => {
      cli0(m).credentialHosts![0]!.scopes = ['https://management.azure.com/.default\u00a0'];
    },
    code: 'MANIFEST_CREDENTIAL_HOSTS_SCOPE_INVALID',
    path: 'clis[0].credentialHosts[0].scopes[0]',
  },
  'duplicate host across two entries': {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).credentialHosts!.push({ hosts: ['acme.atlassian.net'] });
    },
    code: 'MANIFEST_CREDENTIAL_HOST_DUPLICATE',
    path: 'clis[0].credentialHosts[1].hosts[0]',
  },
  'credential host not in egress': {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).credentialHosts![0]!.hosts.push('evil.example.com');
    },
    code: 'MANIFEST_CREDENTIAL_HOST_NOT_IN_EGRESS',
    path: 'clis[0].credentialHosts[0].hosts[1]',
  },
  'env value over 1,024 characters': {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).env = { JIRA_NOTE: 'a'.repeat(1025) };
    },
    code: 'MANIFEST_ENV_VALUE_TOO_LONG',
    path: 'clis[0].env.JIRA_NOTE',
  },
  'env name also in credentialEnv': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).env!.GH_TOKEN = 'x';
    },
    code: 'MANIFEST_ENV_NAME_IN_CREDENTIAL_ENV',
    path: 'clis[0].env.GH_TOKEN',
  },
  'endpointEnv is a platform-owned name': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).endpointEnv = 'HTTPS_PROXY';
    },
    code: 'MANIFEST_ENV_NAME_RESERVED',
    path: 'clis[0].endpointEnv',
  },
  'endpointEnv is a credentialEnv name': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).endpointEnv = 'GH_TOKEN';
    },
    code: 'MANIFEST_ENDPOINT_ENV_CONFLICT',
    path: 'clis[0].endpointEnv',
  },
  'endpointEnv is an env key': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).endpointEnv = 'GH_REPO';
    },
    code: 'MANIFEST_ENDPOINT_ENV_CONFLICT',
    path: 'clis[0].endpointEnv',
  },
  'preamble with 0 arguments': {
    base: azExtension,
    mutate: (m) => {
      cli0(m).bootstrap!.preamble = [];
    },
    code: 'MANIFEST_PREAMBLE_LENGTH',
    path: 'clis[0].bootstrap.preamble',
  },
  'preamble with 33 arguments': {
    base: azExtension,
    mutate: (m) => {
      cli0(m).bootstrap!.preamble = Array.from({ length: 33 }, () => 'x');
    },
    code: 'MANIFEST_PREAMBLE_LENGTH',
    path: 'clis[0].bootstrap.preamble',
  },
  'preamble argument with a placeholder other than {clientId}/{tenantId}/{dummy}': {
    base: azExtension,
    mutate: (m) => {
      cli0(m).bootstrap!.preamble[5] = '{clientSecret}';
    },
    code: 'MANIFEST_PREAMBLE_PLACEHOLDER_UNKNOWN',
    path: 'clis[0].bootstrap.preamble[5]',
  },
  'preamble argument that is secret-shaped': {
    base: azExtension,
    mutate: (m) => {
      cli0(m).bootstrap!.preamble[5] = SECRET_SAMPLES['OpenAI-style key (sk-)']!;
    },
    code: 'MANIFEST_PREAMBLE_SECRET',
    path: 'clis[0].bootstrap.preamble[5]',
  },
  'more than 256 wire-policy overrides': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).wirePolicy = {
        overrides: Array.from({ length: 257 }, () => ({
          match: { method: 'GET' },
          wireClass: 'read' as const,
        })),
      };
    },
    code: 'MANIFEST_OVERRIDES_TOO_MANY',
    path: 'clis[0].wirePolicy.overrides',
  },
  'an override that constrains no field': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).wirePolicy!.overrides.push({ match: {}, wireClass: 'read' });
    },
    code: 'MANIFEST_OVERRIDE_UNCONSTRAINED',
    path: 'clis[0].wirePolicy.overrides[1].match',
  },
  'toolkit names an undeclared toolkit': {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).toolkit = 'confluence';
    },
    code: 'MANIFEST_TOOLKIT_UNDECLARED',
    path: 'clis[0].toolkit',
  },
  'toolkit bound to a credential other than auth.default': {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).toolkit = 'reports';
    },
    code: 'MANIFEST_TOOLKIT_NOT_DEFAULT_CREDENTIAL',
    path: 'clis[0].toolkit',
  },
  'toolkit absent while no toolkit uses auth.default': {
    base: atlassianExtension,
    mutate: (m) => {
      delete cli0(m).toolkit;
      m.toolkits = { reports: { credential: 'auth.reporting' } };
    },
    code: 'MANIFEST_TOOLKIT_MISSING',
    path: 'clis[0].toolkit',
  },
  'toolkit absent while two toolkits use auth.default': {
    base: atlassianExtension,
    mutate: (m) => {
      delete cli0(m).toolkit;
      m.toolkits = { jira: { credential: 'auth.default' }, confluence: { credential: 'auth.default' } };
    },
    code: 'MANIFEST_TOOLKIT_AMBIGUOUS',
    path: 'clis[0].toolkit',
  },
  'help tree partial for a budget, not max_depth': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).helpTree!.partial = { reason: 'time_budget' };
    },
    code: 'MANIFEST_HELP_TREE_PARTIAL',
    path: 'clis[0].helpTree.partial.reason',
  },
  'help tree deeper than maxDepth': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).helpTree!.commands = [deepCommand(3)];
    },
    code: 'MANIFEST_HELP_TREE_TOO_DEEP',
    path: 'clis[0].helpTree.commands[0].commands[0].commands[0]',
  },
  'help tree over 512 commands': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).helpTree!.commands = Array.from({ length: 513 }, (_, i) => ({ name: `c${i}` }));
    },
    code: 'MANIFEST_HELP_TREE_TOO_MANY_COMMANDS',
    path: 'clis[0].helpTree.commands',
  },
  'egress host that is not a DNS name': {
    base: atlassianExtension,
    mutate: (m) => {
      m.egress.push('*.atlassian.net');
    },
    code: 'MANIFEST_EGRESS_HOST_NOT_DNS',
    path: 'egress[2]',
  },
  'a field the schema does not define (typo)': {
    base: ghExtension,
    mutate: (m) => {
      (cli0(m) as unknown as Record<string, unknown>).credentialsEnv = ['GH_TOKEN'];
    },
    code: 'MANIFEST_FIELD_UNKNOWN',
    path: 'clis[0].credentialsEnv',
  },
  'a field of the wrong type': {
    base: ghExtension,
    mutate: (m) => {
      (cli0(m).binary as unknown as Record<string, unknown>).entrypoint = 42;
    },
    code: 'MANIFEST_FIELD_INVALID',
    path: 'clis[0].binary.entrypoint',
  },
  'an env name that is not a variable name': {
    base: ghExtension,
    mutate: (m) => {
      cli0(m).env!['GH-REPO'] = 'x';
    },
    code: 'MANIFEST_ENV_NAME_INVALID',
    path: 'clis[0].env["GH-REPO"]',
  },
};

for (const [bad, label] of [
  ['*.atlassian.net', 'wildcard'],
  ['10.0.0.1', 'IPv4 literal'],
  ['[::1]', 'IPv6 literal'],
  ['acme.atlassian.net:443', 'port'],
  ['Acme.atlassian.net', 'upper case'],
  ['acme.atlassian.net.', 'trailing dot'],
] as const) {
  cases[`credential host with a ${label}`] = {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).credentialHosts![0]!.hosts = [bad];
    },
    code: 'MANIFEST_CREDENTIAL_HOST_NOT_DNS',
    path: 'clis[0].credentialHosts[0].hosts[0]',
  };
}
for (const [label, value] of Object.entries(SECRET_SAMPLES)) {
  cases[`secret-shaped env value: ${label}`] = {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).env = { JIRA_SETTING: value };
    },
    code: 'MANIFEST_ENV_VALUE_SECRET',
    path: 'clis[0].env.JIRA_SETTING',
  };
}
for (const name of [
  'HTTPS_PROXY',
  'https_proxy',
  'Http_Proxy',
  'ALL_PROXY',
  'NO_PROXY',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO',
  'PATH',
  'HOME',
  'TMPDIR',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'DYLD_INSERT_LIBRARIES',
  'BASH_ENV',
  'ENV',
  'NODE_OPTIONS',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PAGER',
  'GIT_PAGER',
  'EDITOR',
  'VISUAL',
  'BROWSER',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'GIT_SSL_NO_VERIFY',
  'ADAL_PYTHON_SSL_NO_VERIFY',
  'ACME_INSECURE',
]) {
  cases[`env name owned by the platform: ${name}`] = {
    base: atlassianExtension,
    mutate: (m) => {
      cli0(m).env = { [name]: '1' };
    },
    code: 'MANIFEST_ENV_NAME_RESERVED',
    path: `clis[0].env.${name}`,
  };
}
for (const arg of ['a;b', '$(id)', 'x|y', '`id`', 'a&&b', '>out', 'two words', '~/x', 'a\\b', 'x{y']) {
  cases[`preamble argument with a shell metacharacter: ${JSON.stringify(arg)}`] = {
    base: azExtension,
    mutate: (m) => {
      cli0(m).bootstrap!.preamble[0] = arg;
    },
    code: 'MANIFEST_PREAMBLE_SHELL_METACHARACTER',
    path: 'clis[0].bootstrap.preamble[0]',
  };
}

t.test('every manifest refusal is its own reason code, at the offending field', async (t) => {
  const names = Object.keys(cases);
  t.plan(names.length);
  for (const name of names) {
    const c = cases[name]!;
    t.test(name, async (t) => {
      const m = c.base();
      c.mutate(m);
      const viaTs = thrown(() => defineExtension(m));
      const viaJson = thrown(() => parseExtensionManifest(JSON.stringify(m)));
      t.equal(viaTs.code, 'MANIFEST_INVALID');
      const problems = viaTs.details!.problems as ManifestProblem[];
      t.same(
        problems.map((p) => [p.code, p.path]),
        [[c.code, c.path]],
        'exactly the one expected problem',
      );
      t.ok(isErrorCode(c.code), 'the reason is in the catalogue');
      t.ok(problems[0]!.expected.length > 0, 'says what is expected');
      t.same(viaJson.details, viaTs.details, 'JSON reports the same');
    });
  }
});

t.test('the base manifests are valid (so each case above isolates one rule)', async (t) => {
  t.plan(3);
  for (const m of [ghExtension(), azExtension(), atlassianExtension()])
    t.doesNotThrow(() => defineExtension(m), m.id);
});
