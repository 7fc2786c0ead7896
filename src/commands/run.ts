/**
 * `clibroker run` and `clibroker resume`: the agent-facing commands when the operator runs
 * the broker daemon. They are thin clients: only the tool, the arguments and the stdin go
 * to the daemon, whose configuration (extensions, connections and their secrets,
 * endpoints, the ceiling, the tier, pinned executables) an agent cannot reach or change.
 * The client (`./daemon-call.ts`) is imported only when a command runs.
 */
import { defineTool } from '../cli/define.js';

const socketParam = {
  type: 'string',
  optional: true,
  describe: "the broker daemon's unix socket; default $CLIBROKER_SOCKET, else /run/clibroker/broker.sock",
} as const;

const tokenFileParam = {
  type: 'string',
  optional: true,
  sensitive: true,
  describe:
    'a file holding the executor token, when the daemon requires one; default $CLIBROKER_EXECUTOR_TOKEN. The token itself never goes in argv: this flag takes a path',
} as const;

const RUN_SHAPE = "{exitCode: number, stdout, stderr, truncated: boolean, runId, cliTier: 'read'|'write'}";

export const run = defineTool({
  name: 'run',
  description: [
    'Run a tool the operator configured (gh_cli, az_cli, curl_cli, …) through the broker daemon; its arguments go after --.',
    "Only the tool, its arguments and stdin are sent: the tier, the credentials and the endpoints are the configuration's.",
    'A non-zero exit is data (data.exitCode, stdout, stderr). A refusal fails with error.code: POLICY_BLOCKED (details.policyCode) for a tier denial or a host outside egress, CLI_CONFIRMATION_* for a destructive request no person can approve here; a host outside egress the CLI outlived is data (data.outlivedRefusals).',
    'error.details.unknownOutcomes: writes the command sent before it was stopped; check them with a read before repeating.',
    'CLI_APPROVAL_PENDING: a person must approve the request (details.approvalId); after that, clibroker resume <approval-id> runs it once.',
    'The tool reads stdin only with --stdin-file <path|->; otherwise its stdin is closed.',
  ].join('\n'),
  parameters: {
    tool: {
      type: 'string',
      maxBytes: 256,
      cliPositional: true,
      describe: 'the tool: its name (gh_cli) or id (github:cli:gh), as the first word after run',
    },
    stdin: {
      type: 'string',
      maxBytes: 1024 * 1024,
      optional: true,
      describe: "text for the tool's stdin (≤ 1 MiB)",
    },
    socket: socketParam,
    tokenFile: tokenFileParam,
    args: {
      type: 'array',
      items: { type: 'string', maxBytes: 32 * 1024 },
      maxItems: 256,
      cliRest: true,
      describe:
        "the tool's arguments, after --, passed as is (never through a shell); at most 256, each at most 32 KiB",
    },
  },
  cli: {
    fileInputAlternatives: [
      {
        paramName: 'stdin',
        fileFlag: 'stdin-file',
        parseAs: 'text',
        description: "read the tool's stdin from a file; - passes this process's stdin through",
      },
    ],
  },
  examples: [
    {
      params: { tool: 'gh_cli', args: ['api', 'user'] },
      comment: 'the GitHub user the configured connection belongs to',
      output: {
        exitCode: 0,
        stdout: '{"login":"octocat"}',
        stderr: '',
        truncated: false,
        runId: '0b6e…',
        cliTier: 'read',
      },
    },
    {
      params: {
        tool: 'gh_cli',
        stdin: '{"query":"query { viewer { login } }"}\n',
        args: ['api', 'graphql', '--input', '-'],
      },
      viaFile: 'stdin',
      comment: 'a GraphQL query on stdin, from a heredoc: quotes, braces and $ arrive as written',
    },
  ],
  outputShape: RUN_SHAPE,
  async run(p) {
    const { runViaDaemon } = await import('./daemon-call.js');
    return runViaDaemon(p);
  },
});

export const resume = defineTool({
  name: 'resume',
  description: [
    'Run the command of an approved request again, once, through the broker daemon (the approval is used up).',
    'The approval id is the details.approvalId of the CLI_APPROVAL_PENDING failure; a person approves it first.',
  ].join('\n'),
  parameters: {
    approval: {
      type: 'string',
      maxBytes: 128,
      cliPositional: true,
      describe: 'the approval id, as the first word after resume',
    },
    socket: socketParam,
    tokenFile: tokenFileParam,
  },
  examples: [
    {
      params: { approval: '5f0c2a9e-1111-4222-8333-944455556666' },
      comment: 'after a person approved the request',
    },
  ],
  outputShape: `the same as run: ${RUN_SHAPE}`,
  async run(p) {
    const { resumeViaDaemon } = await import('./daemon-call.js');
    return resumeViaDaemon(p);
  },
});
