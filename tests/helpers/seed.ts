/**
 * The seed-shaped deployment: one operator configuration installing three extensions the
 * way real ones are written — gh (GH_TOKEN and GH_ENTERPRISE_TOKEN as placeholders, GH_HOST
 * as endpointEnv, the organization's GHE endpoint), curl for Atlassian (the credential on
 * api.atlassian.com only, while the extension also reaches api.bitbucket.org) and az (a
 * service-principal sign-in bootstrap and two scoped credentialHosts entries) — against one
 * embedded mock vendor that serves every host by SNI and checks what each host received.
 */
import { join } from 'node:path';
import type { OperatorConfig } from '../../src/config/types.js';
import { azCli, azureExtension, ghCli, githubExtension } from '../../src/manifest/examples.js';
import type { ExtensionManifest } from '../../src/manifest/types.js';
import { azureVendor } from '../../src/mockvendor/azure.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { type MockVendor, startMockVendor, type VendorHandler } from '../../src/mockvendor/server.js';
import { type ConfigDir, configDir } from './config.js';

export const GHE = 'ghe.acme.example';
export const SEED = {
  ghToken: 'ghp_SeedEnterpriseToken00000000000000001',
  atlassianUser: 'bot@acme.example',
  atlassianToken: 'ATATT3xSeedAtlassianApiToken0000000000001',
  tenant: '72f988bf-0000-4000-8000-000000000001',
  client: '11111111-2222-3333-4444-555555555555',
  azSecret: 'AzSeedClientSecret~kept.by.clibroker.0001',
  subscription: '00000000-1111-2222-3333-444444444444',
} as const;

/** The example gh on image gh, as GHE needs it: its token variable too, GH_HOST, and no spinner or prompt. */
export const ghManifest: ExtensionManifest = githubExtension([
  {
    ...ghCli({ image: 'gh' }),
    credentialEnv: ['GH_TOKEN', 'GH_ENTERPRISE_TOKEN'],
    env: { GH_SPINNER_DISABLED: '1', GH_PROMPT_DISABLED: '1' },
    endpointEnv: 'GH_HOST',
  },
]);

export const atlassianManifest: ExtensionManifest = {
  id: 'atlassian',
  egress: ['api.atlassian.com', 'api.bitbucket.org'],
  toolkits: { jira: { credential: 'auth.default' } },
  clis: [
    {
      id: 'curl',
      binary: { image: 'curl', entrypoint: 'curl' },
      credentialHosts: [{ hosts: ['api.atlassian.com'] }],
    },
  ],
};

/** The example az, on image azure-cli. */
export const azureManifest: ExtensionManifest = azureExtension([azCli({ image: 'azure-cli' })]);

const ATLASSIAN_BASIC = `Basic ${Buffer.from(`${SEED.atlassianUser}:${SEED.atlassianToken}`).toString('base64')}`;

/** api.atlassian.com wants the basic credential; api.bitbucket.org answers only requests that carry none. */
const atlassian: VendorHandler = (req) => {
  if (req.host === 'api.atlassian.com') {
    if (req.headers.authorization !== ATLASSIAN_BASIC)
      return { status: 401, body: { message: 'Unauthorized' } };
    if (req.method === 'GET' && req.path === '/me')
      return { status: 200, body: { account_id: '5b10a2844c20165700ede21g', email: SEED.atlassianUser } };
    return { status: 404, body: { message: 'Not Found' } };
  }
  if (req.headers.authorization !== undefined)
    return { status: 400, body: { error: { message: 'bitbucket got a credential it must never get' } } };
  if (req.method === 'GET' && req.path === '/2.0/repositories/acme')
    return { status: 200, body: { values: [{ full_name: 'acme/app' }] } };
  return { status: 404, body: { error: { message: 'Not Found' } } };
};

export interface SeedDeployment {
  vendor: MockVendor;
  dir: ConfigDir;
  config: OperatorConfig;
  /** the configuration file */
  file: string;
  close(): Promise<void>;
}

/** Writes the seed configuration (isolated images, secrets in 0600 files) and starts the vendor. */
export async function seedDeployment(
  over: (c: OperatorConfig, d: ConfigDir) => OperatorConfig = (c) => c,
): Promise<SeedDeployment> {
  const gh = githubVendor({ token: SEED.ghToken });
  const az = azureVendor({
    tenantId: SEED.tenant,
    clientId: SEED.client,
    clientSecret: SEED.azSecret,
    subscriptionId: SEED.subscription,
  });
  const vendor = await startMockVendor((req) => {
    if (req.host === GHE || req.host === 'api.github.com') return gh(req);
    if (req.host === 'api.atlassian.com' || req.host === 'api.bitbucket.org') return atlassian(req);
    return az(req);
  });
  const dir = configDir('clibroker-seed-');
  const hosts = [
    GHE,
    'api.github.com',
    'api.atlassian.com',
    'api.bitbucket.org',
    'login.microsoftonline.com',
    'management.azure.com',
    'graph.microsoft.com',
    'azure.microsoft.com',
  ];
  const base: OperatorConfig = {
    version: 1,
    // the conformance gate has its own tests; these are about something else
    conformance: 'optional',
    organization: { ceiling: 'write' },
    images: {
      gh: dir.image('/usr/bin/gh'),
      curl: dir.image('/usr/bin/curl'),
      'azure-cli': dir.image('/usr/bin/az'),
    },
    extensions: {
      github: {
        ...dir.manifest(ghManifest),
        endpoint: GHE,
        connection: { kind: 'oauth_access_token', accessToken: dir.secret('gh', SEED.ghToken) },
      },
      atlassian: {
        ...dir.manifest(atlassianManifest),
        connection: {
          kind: 'basic',
          username: SEED.atlassianUser,
          password: dir.secret('atlassian', SEED.atlassianToken),
        },
      },
      azure: {
        ...dir.manifest(azureManifest),
        connection: {
          kind: 'oauth_client_credentials',
          clientId: SEED.client,
          tenantId: SEED.tenant,
          tokenUrl: `https://login.microsoftonline.com/${SEED.tenant}/oauth2/v2.0/token`,
          clientSecret: dir.secret('azure', SEED.azSecret),
        },
      },
    },
    store: join(dir.dir, 'state', 'store.db'),
    deadlineSeconds: 120,
    upstream: dir.upstream(vendor, hosts),
  };
  const config = over(base, dir);
  const file = dir.write(config);
  return {
    vendor,
    dir,
    config,
    file,
    async close() {
      await vendor.close();
      dir.remove();
    },
  };
}

/** Every secret of the seed deployment, for leak checks. */
export const SEED_SECRETS = [SEED.ghToken, SEED.atlassianToken, SEED.azSecret];
