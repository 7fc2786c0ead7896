/**
 * The conformance settings for the CLIs clibroker knows (gh, curl, az): the manifest they
 * are declared with (the examples, src/manifest/examples.ts), the embedded vendor they run against, the credential that vendor
 * accepts and the read and write commands tried. An extension's own CLI brings its manifest
 * (`--manifest-file`) and names its commands and vendor; these supply the rest.
 */
import type { Connection } from '../credentials/types.js';
import { defineExtension } from '../manifest/define.js';
import { azureExtension, githubExtension } from '../manifest/examples.js';
import type { ExtensionManifest } from '../manifest/types.js';
import { azureVendor } from '../mockvendor/azure.js';
import { githubVendor } from '../mockvendor/github.js';
import type { VendorHandler } from '../mockvendor/server.js';
import type { ConformanceProbe } from './types.js';

/** The embedded mock vendors: a GitHub-like API and an Azure-like one. */
export type MockVendorName = 'github' | 'azure';

/** The extension, probe and mock vendor for a CLI whose conformance settings ship with clibroker. */
export interface KnownConformance {
  extension: ExtensionManifest;
  vendor: MockVendorName;
  probe: ConformanceProbe;
}

/** The embedded vendors' credentials: they exist only for the mock vendor, never for a real one. */
const MOCK_GITHUB_TOKEN = 'gho_ConformanceMockVendorToken000001';
const AZ = {
  tenantId: '72f988bf-0000-4000-8000-00000000c0f0',
  clientId: 'c0f0c0f0-2222-3333-4444-555555555555',
  clientSecret: 'ConformanceMockVendorSecret~0001',
  subscriptionId: '00000000-1111-2222-3333-44444444c0f0',
};

/** The mock vendor and the connection it accepts. */
export function mockVendor(name: MockVendorName): { vendor: VendorHandler; connection: Connection } {
  if (name === 'azure') {
    return {
      vendor: azureVendor(AZ),
      connection: {
        kind: 'oauth_client_credentials',
        clientId: AZ.clientId,
        clientSecret: AZ.clientSecret,
        tenantId: AZ.tenantId,
        tokenUrl: `https://login.microsoftonline.com/${AZ.tenantId}/oauth2/v2.0/token`,
      },
    };
  }
  return {
    vendor: githubVendor({ token: MOCK_GITHUB_TOKEN }),
    connection: { kind: 'oauth_access_token', accessToken: MOCK_GITHUB_TOKEN },
  };
}

/**
 * The table, built on the first lookup: defining the manifests validates them, and
 * importing the package must not load the validator.
 */
function buildKnown(): Record<string, KnownConformance> {
  const github = defineExtension(githubExtension());
  const azure = defineExtension(azureExtension());

  return {
    gh: {
      extension: github,
      vendor: 'github',
      probe: {
        read: ['api', 'user'],
        write: ['api', '-X', 'POST', 'repos/acme/app/issues', '-f', 'title=x'],
      },
    },
    curl: {
      extension: github,
      vendor: 'github',
      probe: {
        read: ['-sS', '-f', 'https://api.github.com/user'],
        write: [
          '-sS',
          '-f',
          '-X',
          'POST',
          '-H',
          'content-type: application/json',
          '--data',
          '{"title":"x"}',
          'https://api.github.com/repos/acme/app/issues',
        ],
      },
    },
    az: {
      extension: azure,
      vendor: 'azure',
      probe: { read: ['group', 'list'], write: ['group', 'create', '-n', 'rg2', '-l', 'westeurope'] },
    },
  };
}

let known: Record<string, KnownConformance> | undefined;

/** The settings for gh, curl or az; undefined for any other id. */
export function knownConformance(cli: string): KnownConformance | undefined {
  known ??= buildKnown();
  return Object.hasOwn(known, cli) ? known[cli] : undefined;
}
