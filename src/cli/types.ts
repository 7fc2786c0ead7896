/**
 * The declarative ToolDefinition. One definition feeds three
 * generators: the zod-validated gadget (`gadget.ts`), the `clibroker <namespace> <command>`
 * CLI (`cli.ts`) and the agent's tool manifest (`manifest.ts`). Everything here is plain
 * data plus one core function, so adding a tool never touches the shared code.
 */

/** The shape of one value: a parameter, an array item or an object property. */
export type ValueSpec =
  | { readonly type: 'string' /** at most this many UTF-8 bytes */; readonly maxBytes?: number }
  | { readonly type: 'number'; readonly integer?: boolean; readonly min?: number; readonly max?: number }
  | { readonly type: 'boolean' }
  | { readonly type: 'enum'; readonly values: readonly [string, ...string[]] }
  | { readonly type: 'array'; readonly items: ValueSpec; readonly maxItems?: number }
  | { readonly type: 'object'; readonly properties?: Readonly<Record<string, FieldSpec>> };

/** An object property: a value shape with an optional description. */
export type FieldSpec = ValueSpec & { readonly describe?: string; readonly optional?: boolean };

/** What every parameter carries besides its shape. */
export interface ParamMeta {
  /** one line for help, manifests, JSON Schema and `expected` in errors */
  readonly describe: string;
  /** absent from input is fine; a `default` implies optional too */
  readonly optional?: boolean;
  readonly default?: unknown;
  /** extra long flag names (without dashes); errors and help always name the canonical one */
  readonly cliAliases?: readonly string[];
  /** only a CLI flag (e.g. `--pretty`); not in the gadget's schema. Excludes `gadgetOnly`. */
  readonly cliOnly?: boolean;
  /** only a gadget input (e.g. `stdin` as a string); never a flag. Excludes `cliOnly`. */
  readonly gadgetOnly?: boolean;
  /** a string array that takes the CLI arguments after `--` (e.g. the vendor's argv) */
  readonly cliRest?: boolean;
  /**
   * a string (or enum) that may also be given as the first bare word before `--`
   * (`clibroker run gh_cli -- …`); its flag stays accepted. At most one per tool.
   */
  readonly cliPositional?: boolean;
  /**
   * the value leads to a secret (a connection file): a corrected command is never offered
   * when the value given looks like content rather than a path, so the content is not echoed
   */
  readonly sensitive?: boolean;
}

/** A parameter of a tool. */
export type ParamDef = ValueSpec & ParamMeta;

/** A parameter whose payload may come from a file (or stdin with `-`). */
export interface FileInputAlternative<K extends string = string> {
  readonly paramName: K;
  /** the flag without dashes; by convention `<param>-file` */
  readonly fileFlag: string;
  /** `json`: the file holds the parameter's JSON; `text`: the file is the string value */
  readonly parseAs: 'json' | 'text';
  readonly description: string;
}

/** One worked example; rendered as copy-pasteable shell under EXAMPLES and `# example:`. */
export interface ToolExample<P> {
  readonly params: P;
  /** one line saying what the example does */
  readonly comment: string;
  /** what `data` looks like for it, shown in help */
  readonly output?: unknown;
  /**
   * A parameter this example passes through its `--<param>-file -` flag, fed by a quoted
   * heredoc (`<<'EOF'`): the way multi-line text, markdown, backticks and `$(…)` reach the
   * command as written, because the shell never reads them. A text value ends with a newline,
   * as everything a heredoc gives does.
   */
  readonly viaFile?: keyof P & string;
}

/** Passed to the core function. */
export interface RunContext {
  /** which surface called: CLI invocations may carry `cliOnly` params, gadget calls `gadgetOnly` ones */
  readonly surface: 'cli' | 'gadget';
  /** CLI only: the text each parameter read from its file alternative held, by parameter name */
  readonly files?: Readonly<Record<string, string>>;
}

type Optionalish<S> = S extends { readonly default: unknown }
  ? false
  : S extends { readonly optional: true } | { readonly cliOnly: true } | { readonly gadgetOnly: true }
    ? true
    : false;

/** The TypeScript value a spec describes. */
export type InferValue<S> = S extends { readonly type: 'string' }
  ? string
  : S extends { readonly type: 'number' }
    ? number
    : S extends { readonly type: 'boolean' }
      ? boolean
      : S extends { readonly type: 'enum'; readonly values: readonly (infer V)[] }
        ? V
        : S extends { readonly type: 'array'; readonly items: infer I }
          ? InferValue<I>[]
          : S extends { readonly type: 'object'; readonly properties: infer P }
            ? InferObject<P>
            : Record<string, unknown>;

/** The object a parameter (or property) table describes; optional entries are `?`. */
export type InferObject<P> = {
  -readonly [K in keyof P as Optionalish<P[K]> extends true ? never : K]: InferValue<P[K]>;
} & {
  -readonly [K in keyof P as Optionalish<P[K]> extends true ? K : never]?: InferValue<P[K]>;
};

/** A parameter table. */
export type Params = Readonly<Record<string, ParamDef>>;

/**
 * One tool. `run` is the core function: it throws on failure (a runtime or auth envelope)
 * and never returns prose sentinels; mutations return `{status, updatedAt, …ids}`.
 */
export interface ToolDefinition<P extends Params = Params, O = unknown> {
  /** the command name, kebab-case (`classify`) */
  readonly name: string;
  /** the topic (`policy`); absent → a top-level command (`clibroker demo`) */
  readonly namespace?: string;
  /** other names for the command itself (suggestions always name the canonical one) */
  readonly cliAliases?: readonly string[];
  /** first line is the summary */
  readonly description: string;
  readonly parameters: P;
  readonly cli?: { readonly fileInputAlternatives?: readonly FileInputAlternative<keyof P & string>[] };
  readonly examples?: readonly ToolExample<Partial<InferObject<P>>>[];
  /** what `data` looks like, in TypeScript-ish notation, for help and manifests */
  readonly outputShape: string;
  // Method syntax on purpose: it keeps definitions with specific parameter tables
  // assignable to `ToolDefinition` (bivariant), so registries can be plain arrays.
  /** Does the work with validated parameters; its result becomes the envelope's data. */
  run(params: InferObject<P>, ctx: RunContext): O | Promise<O>;
}

/**
 * Any tool definition, for registries and the shared code. A structural type rather than
 * `ToolDefinition<Params>`: TypeScript measures the inferred parameter types as invariant,
 * so specific definitions would not be assignable to the generic instance.
 */
export interface AnyTool {
  readonly name: string;
  readonly namespace?: string;
  readonly cliAliases?: readonly string[];
  readonly description: string;
  readonly parameters: Params;
  readonly cli?: { readonly fileInputAlternatives?: readonly FileInputAlternative[] };
  readonly examples?: readonly ToolExample<Readonly<Record<string, unknown>>>[];
  readonly outputShape: string;
  /** Does the work with validated parameters. */
  // biome-ignore lint/suspicious/noExplicitAny: the shared code passes validated input it cannot type
  run(params: any, ctx: RunContext): unknown;
}

/** The eight error types of the envelope. */
export type ErrorType =
  | 'flag-parse'
  | 'json-parse'
  | 'missing-required'
  | 'enum-mismatch'
  | 'unknown-flag'
  | 'unknown-command'
  | 'auth'
  | 'runtime';

/** The `error` member of a failure envelope. */
export interface EnvelopeError {
  type: ErrorType;
  /** flag name(s) without dashes, comma-separated when several are at fault; a flag typed with one dash keeps it (`-m`) */
  flag?: string;
  message: string;
  /** what was given, secret-shaped parts redacted, cut at 80 characters (`… (N chars)` gives the original length) */
  got?: string;
  /** the flag's example when there is one, else its description */
  expected?: string;
  hint?: string;
  /** a complete, copy-pasteable example invocation */
  example?: string;
  /**
   * The agent's own command with this mistake corrected, as one shell line: running it as
   * is does not bring this error back. Values the agent never gave (a forgotten value) are
   * the definition's example values. Absent when no literal correction exists.
   */
  retry?: string;
  /** the catalogue code (`POLICY_BLOCKED`, `COMMAND_INPUT_INVALID`, …); every failure envelope carries one */
  code?: string;
  /** that error's details (`policyCode`, `approvalId`, …), redacted and capped like every field */
  details?: Record<string, unknown>;
}

/** What every surface answers with. */
export type Envelope<T = unknown> = { success: true; data: T } | { success: false; error: EnvelopeError };
