/**
 * What `clibroker serve --demo` serves against: the github extension with gh and curl, and the
 * embedded GitHub-like mock vendor accepting one fresh connection token. The command
 * (src/commands/serve-demo.ts) writes the throwaway configuration around them.
 */
import { randomBytes } from 'node:crypto';
import { curlCli, ghCli, githubExtension } from '../manifest/examples.js';
import type { ExtensionManifest } from '../manifest/types.js';
import { githubVendor } from '../mockvendor/github.js';
import { type MockVendor, startMockVendor } from '../mockvendor/server.js';

/** Where the demo's CLIs come from: this machine's own gh and curl. */
export const DEMO_EXECUTABLES = { gh: '/usr/bin/gh', curl: '/usr/bin/curl' } as const;

/** The reviewer's name in the demo's serve block (the audit records approvals under it). */
export const DEMO_REVIEWER = 'demo-reviewer';

/**
 * The demo's extension: gh and curl against api.github.com, the credential stamped by the
 * broker. Unlike the plain examples, each CLI runs on its own pinned image, gh is told not to
 * spin or prompt, and curl names api.github.com as the host its credential is stamped on.
 */
export const demoServeManifest: ExtensionManifest = githubExtension([
  { ...ghCli({ image: 'gh' }), env: { GH_SPINNER_DISABLED: '1', GH_PROMPT_DISABLED: '1' } },
  { ...curlCli({ image: 'curl' }), credentialHosts: [{ hosts: ['api.github.com'] }] },
]);

/** The mock vendor started in this process, and the connection token it accepts (fresh each time). */
export async function startServeDemoVendor(): Promise<{ vendor: MockVendor; token: string }> {
  const token = `gho_${randomBytes(18).toString('hex')}`;
  return { vendor: await startMockVendor(githubVendor({ token })), token };
}
