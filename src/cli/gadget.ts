/**
 * The gadget factory: a ToolDefinition as an in-process function an agent host calls
 * directly. Input is validated with zod against the gadget surface (`cliOnly` parameters
 * excluded, `gadgetOnly` included); the answer is the same envelope the CLI prints.
 */
import { errorFromThrown, failure, ok } from './envelope.js';
import { jsonSchema, type JsonSchema } from './schema.js';
import { defineTool, gadgetName } from './define.js';
import type { AnyTool, Envelope, InferObject, Params, ToolDefinition } from './types.js';
import { validateInput } from './validate.js';

/** An in-process tool. */
export interface Gadget<O = unknown> {
  /** `[A-Za-z0-9_-]{1,64}`, e.g. `policy_classify` */
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input (draft 2020-12 subset) */
  readonly inputSchema: JsonSchema;
  readonly definition: AnyTool;
  /** Validate, run the core function, answer with an envelope. Never throws. */
  invoke(input: unknown): Promise<Envelope<O>>;
}

/** Build the gadget for a definition (typed output), or for any registry entry. */
export function createGadget<P extends Params, O>(def: ToolDefinition<P, O>): Gadget<O>;
export function createGadget(def: AnyTool): Gadget;
export function createGadget<P extends Params, O>(def: ToolDefinition<P, O>): Gadget<O> {
  const any = def as unknown as AnyTool;
  return {
    name: gadgetName(any),
    description: def.description,
    inputSchema: jsonSchema(any, 'gadget'),
    definition: any,
    async invoke(input) {
      try {
        const params = validateInput(any, 'gadget', input) as InferObject<P>;
        return ok(await def.run(params, { surface: 'gadget' }));
      } catch (e) {
        return failure(errorFromThrown(e));
      }
    },
  };
}

/** A manifest-declared vendor CLI, as far as its gadget needs to know. */
export interface VendorCliRef {
  /** lower-case id; the gadget is `<id>_cli` */
  readonly id: string;
  /** what the agent reads: the help tree's summary and top-level commands */
  readonly description?: string;
}

/** What a vendor CLI gadget receives. */
export interface VendorCliInput {
  argv: string[];
  stdin?: string;
}

/**
 * The ToolDefinition of a vendor CLI's gadget `<id>_cli` (argv array + optional stdin).
 * `run` is the engine's entry point; the result carries exitCode/stdout/stderr or the refusal.
 */
export function vendorCliTool<O>(cli: VendorCliRef, run: (input: VendorCliInput) => O | Promise<O>) {
  return defineTool({
    // namespace <id>, command `cli`: the gadget name comes out as `<id>_cli` with no special case.
    namespace: cli.id.toLowerCase().replace(/[^a-z0-9-]/g, '-'),
    name: 'cli',
    description: cli.description ?? `Run the ${cli.id} CLI through clibroker's governing proxy.`,
    parameters: {
      argv: {
        type: 'array',
        items: { type: 'string' },
        describe: `arguments for ${cli.id}, without the program name; never shell-quoted`,
        cliRest: true,
      },
      stdin: { type: 'string', optional: true, describe: 'text passed to the CLI on stdin', gadgetOnly: true },
    },
    examples: [],
    outputShape: '{exitCode: number, stdout: string, stderr: string} or the refusal',
    run: (p) => run({ argv: p.argv, ...(p.stdin === undefined ? {} : { stdin: p.stdin }) }),
  });
}

/** The gadget `<id>_cli` for a declared vendor CLI, built by the same factory as every tool. */
export function createVendorCliGadget<O>(cli: VendorCliRef, run: (input: VendorCliInput) => O | Promise<O>): Gadget<O> {
  return createGadget(vendorCliTool(cli, run));
}
