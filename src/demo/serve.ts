/**
 * What `clibroker serve --demo` serves against: the github extension with gh and curl, and the
 * embedded GitHub-like mock vendor accepting one fresh connection token. The command
 * (src/commands/serve-demo.ts) writes the throwaway configuration around them.
 */
import { randomBytes } from 'node:crypto';
import type { ExtensionManifest } from '../manifest/types.js';
import { githubVendor } from '../mockvendor/github.js';
import { type MockVendor, startMockVendor } from '../mockvendor/server.js';

/** Where the demo's CLIs come from: this machine's own gh and curl. */
export const DEMO_EXECUTABLES = { gh: '/usr/bin/gh', curl: '/usr/bin/curl' } as const;

/** The reviewer's name in the demo's serve block (the audit records approvals under it). */
export const DEMO_REVIEWER = 'demo-reviewer';

/** The demo's extension: gh and curl against api.github.com, the credential stamped by the broker. */
export const demoServeManifest: ExtensionManifest = {
  id: 'github',
  egress: ['api.github.com'],
  toolkits: { github: { credential: 'auth.default' } },
  clis: [
    {
      id: 'gh',
      binary: { image: 'gh', entrypoint: 'gh' },
      credentialEnv: ['GH_TOKEN'],
      env: { GH_SPINNER_DISABLED: '1', GH_PROMPT_DISABLED: '1' },
      authScheme: 'token',
    },
    {
      id: 'curl',
      binary: { image: 'curl', entrypoint: 'curl' },
      credentialHosts: [{ hosts: ['api.github.com'] }],
      authScheme: 'token',
    },
  ],
};

/** The mock vendor started in this process, and the connection token it accepts (fresh each time). */
export async function startServeDemoVendor(): Promise<{ vendor: MockVendor; token: string }> {
  const token = `gho_${randomBytes(18).toString('hex')}`;
  return { vendor: await startMockVendor(githubVendor({ token })), token };
}
