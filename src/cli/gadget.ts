/**
 * The gadget factory: a ToolDefinition as an in-process function an agent host calls
 * directly. Input is validated with zod against the gadget surface (`cliOnly` parameters
 * excluded, `gadgetOnly` included); the answer is the same envelope the CLI prints.
 */
import { errorFromThrown, failure, ok } from './envelope.js';
import { jsonSchema, type JsonSchema } from './schema.js';
import { gadgetName } from './define.js';
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
