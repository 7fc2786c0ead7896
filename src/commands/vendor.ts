/**
 * `clibroker vendor run` and `clibroker vendor resume`: a vendor CLI (gh, az, curl, …)
 * governed by a broker started in this process, with the store on disk. The back-end
 * (`../vendor-run.ts`: broker, runner, sandbox, store) is imported only when the command runs.
 *
 * Stdin: the vendor CLI gets stdin only through `--stdin-file <path|->` (a text file
 * alternative of `stdin`), so the one-stdin rule covers it like every other payload:
 * `--stdin-file - --manifest-file -` is refused before anything is read. Without it the
 * child's stdin is closed.
 */
import { defineTool } from '../cli/define.js';
import { curlCli, githubExtension } from '../manifest/examples.js';
import { connectionFileParam, storeParam } from './common.js';

const tierValues = ['read', 'write'] as const;

/** A manifest small enough for an example: the extension github with one CLI, curl. */
// spread into a plain object literal, the shape an example's params take
const exampleManifest = { ...githubExtension([curlCli()]) };

const RUN_SHAPE =
  "{status: 'completed'|'refused'|'paused'|'timed_out'|'failed', runId, exitCode: number|null, signal: string|null, stdout, stderr, truncated: boolean, cliTier: 'read'|'write', cliTierReason, profile, requests: number, refusals, durationMs, refusal?: {code, policyCode?, message, method, host, path}, approvalId?: string, approval?: {id, method, host, path, digest, status}, next?: string, code?: 'CLI_TIMEOUT'|'CLI_EXITED_BY_SIGNAL'}";

export const vendorRun = defineTool({
  namespace: 'vendor',
  name: 'run',
  description: [
    "Run a vendor CLI declared in an extension manifest through clibroker's governing proxy; its arguments go after --.",
    'The credential comes only from $CLIBROKER_CONNECTION or --connection-file (secrets never in argv).',
    'A non-zero exit is data: read data.status (completed, refused, paused, timed_out, failed), exitCode, signal, stdout, stderr.',
    'paused: a destructive request waits for a person (data.approvalId); after approval, vendor resume runs the command again once.',
    'The vendor CLI reads stdin only with --stdin-file <path|-> (the one stdin consumer); otherwise its stdin is closed.',
  ].join('\n'),
  parameters: {
    manifest: { type: 'object', describe: 'the extension manifest as JSON (defineExtension shape)' },
    cli: { type: 'string', describe: 'the id of the CLI in the manifest to run (e.g. gh, az, curl)' },
    tier: {
      type: 'enum',
      values: tierValues,
      optional: true,
      describe: 'the tier requested for this call; read when absent',
    },
    context: {
      type: 'enum',
      values: ['agent-step', 'agent-step-never-asks', 'chat', 'api', 'tool-block', 'scheduled'],
      default: 'agent-step',
      describe: 'where the call runs; only agent-step (an agent step with a person) can pause for approval',
    },
    stdin: {
      type: 'string',
      maxBytes: 1024 * 1024,
      optional: true,
      describe: "text for the vendor CLI's stdin (≤ 1 MiB)",
    },
    organizationCeiling: {
      type: 'enum',
      values: tierValues,
      default: 'write',
      describe: "the organization's tier ceiling",
    },
    assignmentAllow: {
      type: 'enum',
      values: tierValues,
      optional: true,
      describe:
        "lower the assignment's allow switch for this call; the store's switch for (manifest id, --assignment) is the gate, read until a person raises it with tiers set (this flag never raises it)",
    },
    assignment: {
      type: 'string',
      default: 'default',
      describe: 'the assignment id whose allow switch the store holds',
    },
    identity: {
      type: 'enum',
      values: ['assigned', 'linked'],
      default: 'assigned',
      describe: "whose identity the connection is: an assigned one, or a person's linked one (read only)",
    },
    endpoint: {
      type: 'string',
      optional: true,
      describe: "the organization's configured endpoint host (e.g. a GHE host)",
    },
    deadline: {
      type: 'number',
      integer: true,
      min: 1,
      max: 270,
      default: 270,
      describe: 'seconds before the CLI is killed, 1..270',
    },
    store: storeParam,
    connectionFile: connectionFileParam,
    args: {
      type: 'array',
      items: { type: 'string', maxBytes: 32 * 1024 },
      maxItems: 256,
      cliRest: true,
      describe:
        "the vendor CLI's arguments, after --, passed as is (never through a shell); at most 256, each at most 32 KiB",
    },
  },
  cli: {
    fileInputAlternatives: [
      {
        paramName: 'manifest',
        fileFlag: 'manifest-file',
        parseAs: 'json',
        description: 'read the extension manifest JSON from a file',
      },
      {
        paramName: 'stdin',
        fileFlag: 'stdin-file',
        parseAs: 'text',
        description: "read the vendor CLI's stdin from a file; - passes this process's stdin through",
      },
    ],
  },
  examples: [
    {
      params: { manifest: exampleManifest, cli: 'curl', args: ['-sS', 'https://api.github.com/user'] },
      comment: 'GET at tier read (the connection comes from $CLIBROKER_CONNECTION)',
      output: {
        status: 'completed',
        exitCode: 0,
        stdout: '{"login":"octocat"}',
        stderr: '',
        cliTier: 'read',
      },
    },
    {
      params: {
        manifest: exampleManifest,
        cli: 'curl',
        tier: 'write',
        args: ['-sS', '-X', 'DELETE', 'https://api.github.com/repos/acme/app'],
      },
      comment: 'a DELETE at tier write (once the assignment allows writes) pauses for approval',
      output: { status: 'paused', approvalId: '5f0c…', exitCode: 0 },
    },
    {
      params: {
        manifest: exampleManifest,
        cli: 'curl',
        tier: 'write',
        stdin: '{"title":"Build broke","body":"`make` failed in $(pwd)"}\n',
        args: ['-sS', '-X', 'POST', '--data-binary', '@-', 'https://api.github.com/repos/acme/app/issues'],
      },
      viaFile: 'stdin',
      comment: 'a JSON body on stdin, from a heredoc: backticks and $(…) reach curl as written',
    },
  ],
  outputShape: RUN_SHAPE,
  async run(p) {
    const { vendorRun: run } = await import('./vendor-run.js');
    return run(p);
  },
});

export const vendorResume = defineTool({
  namespace: 'vendor',
  name: 'resume',
  description: [
    'Run the command of an approved approval again, once, with that one request allowed (single use).',
    'The command comes from the run spec vendor run saved next to the store; the connection again from $CLIBROKER_CONNECTION or --connection-file.',
  ].join('\n'),
  parameters: {
    approval: { type: 'string', describe: 'the approval id (data.approvalId of the paused run)' },
    store: storeParam,
    connectionFile: connectionFileParam,
  },
  examples: [
    {
      params: { approval: '5f0c2a9e-1111-4222-8333-944455556666' },
      comment: 'resume after a person approved',
    },
  ],
  outputShape: `the same as vendor run: ${RUN_SHAPE}`,
  async run(p) {
    const { vendorResume: resume } = await import('./vendor-run.js');
    return resume(p);
  },
});
