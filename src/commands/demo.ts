/**
 * `clibroker demo`: the same flow as `npm run demo` (src/demo), answered as one envelope:
 * the steps, the checks and the audit trail as a table (`jq -r .data.auditTable`).
 */
import { defineTool } from '../cli/define.js';

export const demo = defineTool({
  name: 'demo',
  description:
    'Run the offline demo: real curl through the broker to an embedded GitHub-like vendor — read tier, a refused mutation, write tier, a DELETE paused, approved and sent once — and the audit trail.',
  parameters: {},
  examples: [{ params: {}, comment: 'run it and print the audit table (jq -r .data.auditTable)' }],
  outputShape:
    '{ok: boolean, steps: {title, tier, status, runId?, exitCode?, http?, output, approvalId?}[], checks: Record<string, boolean>, vendorRequests: number, auditTable: string}',
  async run() {
    const { runDemo } = await import('../demo/index.js');
    const report = await runDemo();
    if (!report.ok)
      throw new Error(
        `the demo ran, but a check failed: ${Object.entries(report.checks)
          .filter(([, v]) => !v)
          .map(([k]) => k)
          .join(', ')}`,
      );
    return report;
  },
});
