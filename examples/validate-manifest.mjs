// Validate an extension manifest received as JSON (from a file, a registry, a pull request)
// before installing it. parseExtensionManifest throws one BrokerError listing every problem.
// Nothing is sent anywhere: it needs no vendor and no token.
//
// It prints, run as is:
//
//   valid: github with gh
//   refused: MANIFEST_INVALID
//     egress[0]: MANIFEST_EGRESS_HOST_NOT_DNS
//     egress[1]: MANIFEST_EGRESS_HOST_NOT_DNS
import { isBrokerError, parseExtensionManifest } from 'clibroker';

const good = JSON.stringify({
  id: 'github',
  egress: ['api.github.com'],
  toolkits: { github: { credential: 'auth.default' } },
  clis: [{ id: 'gh', binary: { image: 'plain', entrypoint: 'gh' }, credentialEnv: ['GH_TOKEN'], authScheme: 'token' }],
});
const ext = parseExtensionManifest(good);
console.log(`valid: ${ext.id} with ${ext.clis.map((c) => c.id).join(', ')}`);

const bad = {
  id: 'github',
  egress: ['*.github.com', 'api.github.com:443'],
  toolkits: { github: { credential: 'auth.default' } },
  clis: [{ id: 'gh', binary: { image: 'plain', entrypoint: 'gh' }, authScheme: 'token' }],
};
try {
  parseExtensionManifest(bad);
} catch (e) {
  if (!isBrokerError(e)) throw e;
  console.log(`refused: ${e.code}`);
  const problems = /** @type {import('clibroker').ManifestProblem[]} */ (e.details?.problems ?? []);
  for (const p of problems) console.log(`  ${p.path}: ${p.code}`);
}
