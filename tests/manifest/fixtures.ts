/**
 * Manifest fixtures modelled on the real CLIs: gh (token scheme,
 * GH_HOST endpoint), az (sign-in bootstrap, two scoped entries) and curl against an
 * Atlassian-like egress list. Each call returns a fresh object a test may mutate.
 */
import type { CliManifest, ExtensionManifest } from '../../src/manifest/index.js';

export function ghCli(): CliManifest {
  return {
    id: 'gh',
    binary: { image: 'gh', entrypoint: '/usr/bin/gh' },
    credentialEnv: ['GH_TOKEN', 'GH_ENTERPRISE_TOKEN'],
    env: { GH_SPINNER_DISABLED: '1', GH_REPO: 'acme/app' },
    endpointEnv: 'GH_HOST',
    authScheme: 'token',
    helpCrawl: { maxDepth: 2 },
    helpTree: {
      summary: 'Work seamlessly with GitHub from the command line.',
      partial: { reason: 'max_depth' },
      commands: [
        { name: 'issue', summary: 'Manage issues', commands: [{ name: 'list' }, { name: 'create' }] },
        { name: 'repo', summary: 'Manage repositories', commands: [{ name: 'delete' }] },
        { name: 'api', summary: 'Make an authenticated GitHub API request' },
      ],
    },
    wirePolicy: { overrides: [{ match: { method: 'POST', pathPattern: '/markdown' }, wireClass: 'read' }] },
  };
}

/** gh: no credentialHosts, so the organization's endpoint (GHE) gets the credential. */
export function ghExtension(): ExtensionManifest {
  return {
    id: 'github',
    egress: ['api.github.com', 'uploads.github.com'],
    toolkits: { github: { credential: 'auth.default' } },
    clis: [ghCli()],
  };
}

export const AZ_PREAMBLE = [
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

export function azCli(): CliManifest {
  return {
    id: 'az',
    binary: { image: 'azure-cli', entrypoint: '/usr/bin/az' },
    env: { AZURE_CORE_OUTPUT: 'json' },
    credentialHosts: [
      { hosts: ['management.azure.com'], scopes: ['https://management.azure.com/.default'] },
      { hosts: ['graph.microsoft.com'], scopes: ['https://graph.microsoft.com/.default'] },
    ],
    bootstrap: { tokenEndpoint: 'credential.tokenUrl', preamble: [...AZ_PREAMBLE] },
  };
}

export function azExtension(): ExtensionManifest {
  return {
    id: 'azure',
    egress: ['management.azure.com', 'graph.microsoft.com'],
    toolkits: { azure: { credential: 'auth.default' } },
    clis: [azCli()],
  };
}

/** curl: the credential on the Atlassian site only; the media host gets none. */
export function curlCli(): CliManifest {
  return {
    id: 'curl',
    binary: { image: 'base', entrypoint: '/usr/bin/curl' },
    credentialHosts: [{ hosts: ['acme.atlassian.net'] }],
  };
}

export function atlassianExtension(): ExtensionManifest {
  return {
    id: 'atlassian',
    egress: ['acme.atlassian.net', 'api.media.atlassian.com'],
    toolkits: { jira: { credential: 'auth.default' }, reports: { credential: 'auth.reporting' } },
    clis: [{ ...curlCli(), toolkit: 'jira' }],
  };
}

/** Run `fn` and return the BrokerError it throws (or fail loudly). */
export function thrown(fn: () => unknown): {
  code: string;
  message: string;
  details?: Record<string, unknown>;
} {
  try {
    fn();
  } catch (e) {
    return e as { code: string; message: string; details?: Record<string, unknown> };
  }
  throw new Error('expected a throw');
}
