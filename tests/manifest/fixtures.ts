/**
 * Manifest fixtures modelled on the real CLIs: gh (token scheme, GH_HOST endpoint) and az
 * (sign-in bootstrap, two scoped entries), each the example of src/manifest/examples.ts with
 * its differences spelled out, and curl against an Atlassian-like egress list. Each call
 * returns a fresh object a test may mutate.
 */
import * as examples from '../../src/manifest/examples.js';
import type { CliManifest, ExtensionManifest } from '../../src/manifest/index.js';

/**
 * The example gh pinned at /usr/bin/gh on image gh, with what the manifest rules need to see:
 * GHE's token variable, GH_HOST, a default repository, a crawled help tree and one override.
 */
export function ghCli(): CliManifest {
  return {
    ...examples.ghCli({ image: 'gh', entrypoint: '/usr/bin/gh' }),
    credentialEnv: ['GH_TOKEN', 'GH_ENTERPRISE_TOKEN'],
    env: { GH_SPINNER_DISABLED: '1', GH_REPO: 'acme/app' },
    endpointEnv: 'GH_HOST',
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

/** gh: no credentialHosts, so the organization's endpoint (GHE) gets the credential; uploads too. */
export function ghExtension(): ExtensionManifest {
  return {
    ...examples.githubExtension([ghCli()]),
    egress: ['api.github.com', 'uploads.github.com'],
  };
}

/** The example az pinned at /usr/bin/az on image azure-cli. */
export function azCli(): CliManifest {
  return examples.azCli({ image: 'azure-cli', entrypoint: '/usr/bin/az' });
}

export function azExtension(): ExtensionManifest {
  return examples.azureExtension([azCli()]);
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
