/**
 * The example manifests of the CLIs clibroker knows, as plain data, in one place: gh and curl
 * against api.github.com, az against Azure Resource Manager and Microsoft Graph. The
 * conformance settings, both demos and the bundled binary's examples declare their
 * extensions from these, and so do the tests and the benches; a use that needs something
 * different spreads an override over one of them where it is used, so the difference stays
 * in sight.
 *
 * Every call returns a fresh object the caller may change. Nothing here is validated:
 * defining a manifest loads the validator, which importing a module must not do, so the
 * caller passes the result to `defineExtension` when it needs it checked.
 */
import type { CliManifest, ExtensionManifest } from './types.js';

type Binary = Partial<CliManifest['binary']>;

/** gh with the token scheme: GH_TOKEN holds the placeholder, so gh sends its requests at all. */
export function ghCli(binary: Binary = {}): CliManifest {
  return {
    id: 'gh',
    binary: { image: 'plain', entrypoint: 'gh', ...binary },
    credentialEnv: ['GH_TOKEN'],
    authScheme: 'token',
  };
}

/** curl with the token scheme: the caller writes the placeholder into its own Authorization header. */
export function curlCli(binary: Binary = {}): CliManifest {
  return { id: 'curl', binary: { image: 'plain', entrypoint: 'curl', ...binary }, authScheme: 'token' };
}

/** az's service-principal sign-in: the secret is a placeholder, the broker answers the token request. */
export const AZ_SIGN_IN_PREAMBLE: readonly string[] = [
  'login',
  '--service-principal',
  '-u',
  '{clientId}',
  '-p',
  '{dummy}',
  '--tenant',
  '{tenantId}',
  '--allow-no-subscriptions',
];

/** az: JSON output, a credential scoped per host, and the sign-in bootstrap. */
export function azCli(binary: Binary = {}): CliManifest {
  return {
    id: 'az',
    binary: { image: 'plain', entrypoint: 'az', ...binary },
    env: { AZURE_CORE_OUTPUT: 'json' },
    credentialHosts: [
      { hosts: ['management.azure.com'], scopes: ['https://management.azure.com/.default'] },
      { hosts: ['graph.microsoft.com'], scopes: ['https://graph.microsoft.com/.default'] },
    ],
    bootstrap: { tokenEndpoint: 'credential.tokenUrl', preamble: [...AZ_SIGN_IN_PREAMBLE] },
  };
}

/** The github extension: api.github.com, one toolkit on the connection, gh and curl unless `clis` says otherwise. */
export function githubExtension(clis: CliManifest[] = [ghCli(), curlCli()]): ExtensionManifest {
  return {
    id: 'github',
    egress: ['api.github.com'],
    toolkits: { github: { credential: 'auth.default' } },
    clis,
  };
}

/** The azure extension: Resource Manager and Graph, one toolkit on the connection, az unless `clis` says otherwise. */
export function azureExtension(clis: CliManifest[] = [azCli()]): ExtensionManifest {
  return {
    id: 'azure',
    egress: ['management.azure.com', 'graph.microsoft.com'],
    toolkits: { azure: { credential: 'auth.default' } },
    clis,
  };
}
