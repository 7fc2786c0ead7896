/**
 * Vendor CLIs as gadgets: every CLI a manifest declares becomes `<id>_cli`
 * (input: `{args, stdin?}`) through the same definition → gadget factory as
 * every other tool. The run function is the engine's, passed in; `extensionGadgets` wires
 * a runner (src/runs) in directly. Only types are imported from the back-ends.
 */
import type { ExtensionManifest } from '../manifest/types.js';
import type { Runner, RunInput } from '../runs/index.js';
import { SANDBOX_LIMITS } from '../sandbox/types.js';
import { defineTool } from './define.js';
import { errorFromThrown, failure, ok } from './envelope.js';
import { createGadget, type Gadget } from './gadget.js';
import { type RunData, runData } from './run-result.js';

/** A manifest-declared vendor CLI, as far as its gadget needs to know. */
export interface VendorCliRef {
  /** lower-case id; the gadget is `<id>_cli` */
  readonly id: string;
  /** what the agent reads: the help tree's summary and top-level commands */
  readonly description?: string;
}

/**
 * The limits every `<id>_cli` gadget states and enforces before anything runs (the sandbox's
 * own budgets, so an agent learns them from the description rather than from a refusal).
 */
export const VENDOR_LIMITS_TEXT = `Limits: at most ${SANDBOX_LIMITS.maxArgs} arguments of at most ${SANDBOX_LIMITS.maxArgBytes / 1024} KiB each (UTF-8), stdin at most ${SANDBOX_LIMITS.maxStdinBytes / (1024 * 1024)} MiB; no shell: each argv element reaches the program unchanged (no quoting, globs, pipes or $VARS).`;

/** What a vendor CLI gadget receives. */
export interface VendorCliInput {
  args: string[];
  stdin?: string;
}

/**
 * The ToolDefinition of a vendor CLI's gadget `<id>_cli` (`{args, stdin?}`).
 * `run` is the engine's entry point; the result carries exitCode/stdout/stderr or the refusal.
 */
export function vendorCliTool<O>(cli: VendorCliRef, run: (input: VendorCliInput) => O | Promise<O>) {
  const { maxArgs, maxArgBytes, maxStdinBytes } = SANDBOX_LIMITS;
  return defineTool({
    // namespace <id>, command `cli`: the gadget name comes out as `<id>_cli` with no special case.
    namespace: cli.id.toLowerCase().replace(/[^a-z0-9-]/g, '-'),
    name: 'cli',
    description: `${cli.description ?? `Run the ${cli.id} CLI through clibroker's governing proxy.`} ${VENDOR_LIMITS_TEXT}`,
    parameters: {
      args: {
        type: 'array',
        items: { type: 'string', maxBytes: maxArgBytes },
        maxItems: maxArgs,
        describe: `arguments for ${cli.id}, without the program name, one array element per argument (at most ${maxArgs}, each at most ${maxArgBytes / 1024} KiB); passed as is, never through a shell, so never shell-quoted`,
        cliRest: true,
      },
      stdin: {
        type: 'string',
        maxBytes: maxStdinBytes,
        optional: true,
        describe: `text passed to the CLI on stdin (at most ${maxStdinBytes / (1024 * 1024)} MiB)`,
        gadgetOnly: true,
      },
    },
    examples: [],
    outputShape: '{exitCode: number, stdout: string, stderr: string} or the refusal',
    run: (p) => run({ args: p.args, ...(p.stdin === undefined ? {} : { stdin: p.stdin }) }),
  });
}

/** The gadget `<id>_cli` for a declared vendor CLI, built by the same factory as every tool. */
export function createVendorCliGadget<O>(
  cli: VendorCliRef,
  run: (input: VendorCliInput) => O | Promise<O>,
): Gadget<O> {
  return createGadget(vendorCliTool(cli, run));
}

/** The parts of a CLI manifest the gadget reads (structurally a `CliManifest`). */
export interface DeclaredCli {
  readonly id: string;
  readonly helpTree?: {
    readonly summary?: string;
    readonly partial?: { readonly reason: string };
    readonly commands: readonly { readonly name: string; readonly summary?: string }[];
  };
}

/** The agent-facing description from a help tree: summary and top-level commands, saying when partial. */
export function describeFromHelpTree(cli: DeclaredCli): string {
  const t = cli.helpTree;
  const head = t?.summary?.trim() || `Run the ${cli.id} CLI through clibroker's governing proxy.`;
  if (!t?.commands.length) return head;
  const list = t.commands.map((c) => (c.summary ? `${c.name} (${c.summary})` : c.name)).join(', ');
  const partial = t.partial
    ? ` The list is partial (${t.partial.reason}); run '${cli.id} <command> --help' for more.`
    : '';
  return `${head} Commands: ${list}.${partial}`;
}

/**
 * One gadget per declared CLI of an extension, named `<id>_cli`, described from its help
 * tree; `run(id, input)` is the engine's entry point.
 */
export function vendorCliGadgets<O>(
  ext: { readonly clis: readonly DeclaredCli[] },
  run: (id: string, input: VendorCliInput) => O | Promise<O>,
): Gadget<O>[] {
  return ext.clis.map((cli) =>
    createVendorCliGadget({ id: cli.id, description: describeFromHelpTree(cli) }, (input) =>
      run(cli.id, input),
    ),
  );
}

/**
 * What every call of an extension's gadgets shares: the connection, the tier inputs, the
 * context kind, the deadline. The per-call parts (CLI, argv, stdin, the tool and its
 * arguments shown to an approver) come from the gadget's input.
 */
export type RunDefaults = Omit<
  RunInput,
  'extension' | 'cli' | 'args' | 'stdin' | 'context' | 'runId' | 'approvedRequestDigests'
> & {
  /** where the calls run; default `agent-step` (an agent step with a person) */
  context?: { kind: RunInput['context']['kind'] };
};

/**
 * The gadgets `<id>_cli` of every CLI an extension declares, each running through `runner`
 * with `defaults`: input `{args, stdin?}` (strict: `cliTier` and other extras are refused
 * before anything runs), data the same as `clibroker vendor run` (status, exitCode, stdout,
 * stderr, the refusal, or `approvalId` when the run paused for a person).
 */
export function extensionGadgets(
  runner: Pick<Runner, 'run'>,
  extension: ExtensionManifest,
  defaults: RunDefaults,
): Gadget<RunData>[] {
  const { context, ...rest } = defaults;
  return vendorCliGadgets(extension, async (cli, input) => {
    const result = await runner.run({
      ...rest,
      extension,
      cli,
      args: input.args,
      ...(input.stdin !== undefined ? { stdin: input.stdin } : {}),
      context: { kind: context?.kind ?? 'agent-step', tool: `${cli}_cli`, toolArgs: { args: input.args } },
    });
    return runData(result);
  });
}

/** The parts of a host the gadgets use (structurally src/host's ToolHost). */
export interface GadgetHost<O> {
  /** The tools the host offers, with their input schemas. */
  tools(): { id: string; name: string; description: string; inputSchema: Record<string, unknown> }[];
  /** Runs one tool for the gadget. */
  runTool(
    tool: string,
    input: unknown,
    opts?: { cliTier?: 'read' | 'write'; context?: RunInput['context']['kind'] },
  ): Promise<O>;
}

/**
 * The gadgets `<id>_cli` of every tool a configured host offers. The input goes to the host
 * as given, and the host checks it (`{args, stdin?}` only: anything else is
 * INVALID_TOOL_INPUT); `opts` — the tier and the context — are the calling platform's.
 * The envelope carries the same codes as `clibroker run`: `data` is the run's output, and a
 * refusal is `error.code` with `error.details` (POLICY_BLOCKED + details.policyCode,
 * CLI_APPROVAL_PENDING + details.approvalId, …).
 */
export function hostGadgets<O>(
  host: GadgetHost<O>,
  opts: { cliTier?: 'read' | 'write'; context?: RunInput['context']['kind'] } = {},
): Gadget<O>[] {
  return host.tools().map((t) => {
    const definition = vendorCliTool(
      { id: t.name.replace(/_cli$/, ''), description: t.description },
      (input) => host.runTool(t.id, input, opts),
    );
    return {
      name: t.name,
      description: definition.description,
      inputSchema: t.inputSchema,
      definition: definition as unknown as Gadget<O>['definition'],
      async invoke(input: unknown) {
        try {
          return ok(await host.runTool(t.id, input, opts));
        } catch (e) {
          return failure(errorFromThrown(e));
        }
      },
    };
  });
}
