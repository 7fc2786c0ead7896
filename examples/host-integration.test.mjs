// A host's integration test (node --test): before shipping an extension, check that its CLIs
// can be governed, for real, against clibroker's embedded mock vendor. Needs gh and curl on PATH.
import assert from 'node:assert/strict';
import test from 'node:test';
import { conformanceTable, knownConformance, mockVendor, runConformance } from 'clibroker';

for (const cli of ['gh', 'curl']) {
  test(`${cli} can be governed: it reads at tier read, and its write passes at tier write`, async () => {
    const known = knownConformance(cli);
    assert.ok(known, `clibroker ships conformance settings for ${cli}`);
    const report = await runConformance({
      extension: known.extension,
      cli,
      probe: known.probe,
      ...mockVendor(known.vendor),
    });
    assert.equal(report.verdict, 'pass', conformanceTable(report));
  });
}
