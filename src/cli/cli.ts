/**
 * The CLI factory: `clibroker <namespace> <command> [flags]` from a list of definitions.
 * Routing, help, the argv tokenizer, file/stdin inputs, validation (zod, loaded lazily so
 * help stays fast), the core function, and exactly one envelope per invocation.
 */
import { parseArgv } from './argv.js';
import { fileAlternative, flagName, isRequired, surfaceParams } from './define.js';
import { CliFailure, errorFromThrown, exitCode, fail, failure, ok, proseLine } from './envelope.js';
import { describeExpected } from './flags.js';
import { commandHelp, rootHelp, topicHelp } from './help.js';
import { resolveFiles, type CliIo } from './inputs.js';
import { resolveCommand } from './route.js';
import { firstExample } from './shell.js';
import type { AnyTool, Envelope } from './types.js';

export type { CliIo } from './inputs.js';

/** What a bundled or embedded CLI is made of. */
export interface CliOptions {
  /** the program name in help, hints and examples; default `clibroker` */
  program?: string;
  /** one line for root help */
  blurb: string;
  version?: string;
  tools: readonly AnyTool[];
}

/** A CLI built from definitions. */
export interface Cli {
  readonly program: string;
  readonly tools: readonly AnyTool[];
  /** Run one invocation; returns the exit code. Writes help or one envelope to `io.stdout`. */
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

function missingRequired(def: AnyTool, values: Record<string, unknown>): void {
  const missing = surfaceParams(def, 'cli').filter(([k, p]) => isRequired(p) && values[k] === undefined);
  if (!missing.length) return;
  const flags = missing.map(([k, p]) => (p.cliRest ? '--' : flagName(k)));
  const [k0, p0] = missing[0]!;
  const alt = fileAlternative(def, k0);
  fail('missing-required', `missing ${flags.map((f) => (f === '--' ? 'arguments after --' : `--${f}`)).join(', ')}`, {
    flag: flags.join(','),
    expected: p0.cliRest ? p0.describe : describeExpected(def, k0),
    ...(alt ? { hint: `or pass it in a file: --${alt.fileFlag} <path|->` } : {}),
  });
}

async function invoke(program: string, def: AnyTool, argv: readonly string[], io: CliIo): Promise<Envelope | string> {
  const parsed = parseArgv(def, argv);
  if (parsed.help) return commandHelp(program, def);
  await resolveFiles(def, parsed.files, parsed.values, io);
  missingRequired(def, parsed.values);
  const { validateInput } = await import('./validate.js');
  const params = validateInput(def, 'cli', parsed.values);
  const data = await def.run(params as never, { surface: 'cli' });
  return ok(data ?? null);
}

/** Build a CLI from definitions. Nothing here is specific to any one tool. */
export function createCli(opts: CliOptions): Cli {
  const program = opts.program ?? 'clibroker';
  const tools = opts.tools;
  const emit = (io: CliIo, out: Envelope | string): number => {
    if (typeof out === 'string') {
      io.stdout(out);
      return 0;
    }
    io.stdout(`${JSON.stringify(out)}\n`);
    if (!out.success) io.stderr(`${proseLine(program, out.error)}\n`);
    return exitCode(out);
  };
  return {
    program,
    tools,
    async run(argv, io) {
      let def: AnyTool | undefined;
      try {
        const first = argv[0];
        if (first === undefined || first === '--help' || first === '-h') return emit(io, rootHelp(program, opts.blurb, tools));
        if (first === '--version') return emit(io, `${opts.version ?? '0.0.0'}\n`);
        const helpFor = first === 'help';
        const r = resolveCommand(program, tools, helpFor ? argv.slice(1) : argv);
        if (r.kind === 'root') return emit(io, rootHelp(program, opts.blurb, tools));
        if (r.kind === 'topic') return emit(io, topicHelp(program, r.topic, r.commands));
        def = r.def;
        if (helpFor) return emit(io, commandHelp(program, def));
        return emit(io, await invoke(program, def, r.rest, io));
      } catch (e) {
        const error = errorFromThrown(e);
        // Every failure about a known command carries a complete invocation to copy.
        const example = def && !error.example && e instanceof CliFailure ? firstExample(program, def) : undefined;
        return emit(io, failure(example ? { ...error, example } : error));
      }
    },
  };
}
