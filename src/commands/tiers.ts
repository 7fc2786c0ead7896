/**
 * `clibroker tiers set`: a person turns one tool's "Allow writes" switch on or off, per CLI
 * within an assignment, so raising gh never raises curl. The store writes the change and its
 * `extension.cli_tier.raised|lowered` event in one transaction. A person's decision: `agent
 * manifest` leaves it out.
 */
import { defineTool } from '../cli/define.js';
import { configParam, storeParam } from './common.js';

export const tiersSet = defineTool({
  namespace: 'tiers',
  name: 'set',
  description:
    "Set one tool's allow switch (read or write): a CLI of an extension within an assignment, audited as extension.cli_tier.raised or .lowered; vendor run and the host read it as the assignment allow for that CLI only.",
  parameters: {
    extension: { type: 'string', describe: 'the extension id (the manifest id)' },
    cli: {
      type: 'string',
      describe:
        "the CLI's id within the extension (gh for the tool gh_cli or github__gh_cli); every other CLI keeps its own switch",
    },
    assignment: { type: 'string', default: 'default', describe: 'the assignment id' },
    tier: {
      type: 'enum',
      values: ['read', 'write'],
      describe: 'write turns "Allow writes" on, read turns it off',
    },
    by: { type: 'string', describe: 'who makes the change (recorded in the event)' },
    store: storeParam,
    config: configParam,
  },
  examples: [
    {
      params: { extension: 'github', cli: 'gh', tier: 'write', by: 'admin@example.com' },
      comment: "allow writes for github's gh in the default assignment",
      output: {
        status: 'changed',
        updatedAt: '2025-01-01T12:00:00.000Z',
        extension: 'github',
        assignment: 'default',
        cli: 'gh',
        previous: 'read',
        tier: 'write',
      },
    },
  ],
  outputShape:
    "{status: 'changed'|'unchanged', updatedAt: string, extension, assignment, cli, previous: 'read'|'write', tier: 'read'|'write', event?}",
  async run(p) {
    const [{ withStore, storeFlag }, { mutationResult }] = await Promise.all([
      import('./store-flag.js'),
      import('./mutation.js'),
    ]);
    // the one state-changing command that may create the store: a switch can be set before the first run
    return withStore(storeFlag(p), true, async (s) => {
      const r = await s.setAssignmentTier({
        extensionId: p.extension,
        assignmentId: p.assignment,
        cliId: p.cli,
        tier: p.tier,
        who: p.by,
      });
      // a change is dated by its audited event; an unchanged switch by when it was checked
      return mutationResult(r.changed ? 'changed' : 'unchanged', r.event?.time ?? new Date(), {
        extension: p.extension,
        assignment: p.assignment,
        cli: p.cli,
        previous: r.previous,
        tier: r.tier,
        ...(r.event ? { event: r.event } : {}),
      });
    });
  },
});
