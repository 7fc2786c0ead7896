import t from 'tap';
import { MINIMAL_PATH, PLACEHOLDER_TOKEN, buildChildEnv } from '../../src/credentials/child-env.js';
import { azCli, ghCli } from '../manifest/fixtures.js';

const base = {
  proxyUrl: 'http://s1:pw@127.0.0.1:4000',
  caFile: '/run/c/ca.pem',
  home: '/run/c/home',
  tmpdir: '/run/c/tmp',
};

t.test('built from nothing: manifest env, placeholders, endpoint, platform variables', async (t) => {
  process.env.CLIBROKER_TEST_LEAK = 'leak';
  t.teardown(() => {
    delete process.env.CLIBROKER_TEST_LEAK;
  });
  const env = buildChildEnv({ ...base, cli: ghCli(), endpointHost: 'ghe.example.com' });
  t.notOk('CLIBROKER_TEST_LEAK' in env, 'nothing inherited');
  t.equal(env.GH_TOKEN, PLACEHOLDER_TOKEN);
  t.equal(env.GH_ENTERPRISE_TOKEN, PLACEHOLDER_TOKEN);
  t.equal(env.GH_HOST, 'ghe.example.com');
  t.equal(env.GH_REPO, 'acme/app', 'manifest env');
  t.equal(env.GH_PROMPT_DISABLED, '1');
  for (const k of ['HTTPS_PROXY', 'https_proxy', 'ALL_PROXY']) t.equal(env[k], base.proxyUrl, k);
  for (const k of [
    'SSL_CERT_FILE',
    'REQUESTS_CA_BUNDLE',
    'CURL_CA_BUNDLE',
    'NODE_EXTRA_CA_CERTS',
    'GIT_SSL_CAINFO',
  ])
    t.equal(env[k], base.caFile, k);
  t.equal(env.HOME, base.home);
  t.equal(env.TMPDIR, base.tmpdir);
  t.equal(env.PATH, MINIMAL_PATH);
  t.notOk('NO_PROXY' in env || 'HTTP_PROXY' in env, 'nothing bypasses or half-configures the proxy');
  t.notOk('SSL_CERT_DIR' in env, 'no certificate directory unless the caller has one');
  t.equal(buildChildEnv({ ...base, cli: ghCli(), certDir: '/run/c/certs' }).SSL_CERT_DIR, '/run/c/certs');
});

t.test(
  'platform variables win even over an unvalidated manifest; no endpoint → no endpointEnv',
  async (t) => {
    const cli = {
      ...azCli(),
      env: { HTTPS_PROXY: 'http://evil', LD_PRELOAD: '/x.so', AZURE_CORE_COLLECT_TELEMETRY: 'yes' },
      endpointEnv: 'AZ_ENDPOINT',
    };
    const env = buildChildEnv({ ...base, cli, path: '/opt/az/bin:/usr/bin' });
    t.equal(env.HTTPS_PROXY, base.proxyUrl);
    t.notOk('LD_PRELOAD' in env);
    t.equal(env.AZURE_CORE_COLLECT_TELEMETRY, 'yes', 'a manifest may override a quiet-down');
    t.notOk('AZ_ENDPOINT' in env);
    t.equal(env.PATH, '/opt/az/bin:/usr/bin');
  },
);
