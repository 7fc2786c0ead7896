/**
 * The CLI factory: `clibroker <namespace> <command> [flags]` from a list of definitions.
 * Routing, help, the argv tokenizer, file/stdin inputs, validation (zod, loaded lazily so
 * help stays fast), the core function, and exactly one envelope per invocation.
 */
import { isHelpWord, parseArgv } from './argv.js';
import {
  OWNS_STDOUT,
  commandPath,
  fileAlternative,
  flagKind,
  flagName,
  isRequired,
  surfaceParams,
} from './define.js';
import { CliFailure, errorFromThrown, exitCode, fail, failure, ok, proseLine } from './envelope.js';
import { fitsAsIs } from './fits.js';
import { describeExpected, exampleValue } from './flags.js';
import { commandHelp, rootHelp, topicHelp } from './help.js';
import { checkStdin, resolveFiles, type CliIo } from './inputs.js';
import { resolveCommand } from './route.js';
import { firstExample, paramWords, renderWords } from './shell.js';
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
  /**
   * The commands this surface offers: an unknown command's lists, did-you-mean and corrected
   * command name only these (default: every tool). Every tool still runs when typed exactly;
   * this decides what a failure invites, not what exists.
   */
  offered?: readonly AnyTool[];
}

/** A CLI built from definitions. */
export interface Cli {
  readonly program: string;
  readonly tools: readonly AnyTool[];
  /** Run one invocation; returns the exit code. Writes help or one envelope to `io.stdout`. */
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

function missingRequired(def: AnyTool, values: Record<string, unknown>, argv: readonly string[]): void {
  const missing = surfaceParams(def, 'cli').filter(([k, p]) => isRequired(p) && values[k] === undefined);
  if (!missing.length) return;
  const flags = missing.map(([k, p]) => (p.cliRest ? '--' : flagName(k)));
  const [k0, p0] = missing[0]!;
  const alt = fileAlternative(def, k0);
  // The corrected command adds each missing flag with the example's value, before any `--`.
  const added = missing.map(([k, p]) => (p.cliRest ? undefined : exampleWords(def, k)));
  const dd = argv.indexOf('--');
  const fix = added.every((w) => w !== undefined)
    ? [...(dd < 0 ? argv : argv.slice(0, dd)), ...added.flat(), ...(dd < 0 ? [] : argv.slice(dd))]
    : undefined;
  const said = missing.map(([k, p], i) =>
    p.cliRest
      ? 'arguments after --'
      : p.cliPositional
        ? `<${flags[i]}> (or --${flags[i]})`
        : `--${flagName(k)}`,
  );
  fail('missing-required', `missing ${said.join(', ')}`, {
    flag: flags.join(','),
    expected: p0.cliRest ? p0.describe : describeExpected(def, k0),
    hint:
      [
        ...(fix
          ? [`retry adds ${added.map((w) => w!.join(' ')).join(' ')} (the example's values: put yours in)`]
          : []),
        ...(alt ? [`or pass it in a file: --${alt.fileFlag} <path|->`] : []),
      ].join('; ') || undefined,
    ...(fix ? { fix } : {}),
  });
}

/** True when `words` give a sensitive flag something that is not a plain path (it would be echoed in `retry`). */
function echoesSensitive(tools: readonly AnyTool[], words: readonly string[]): boolean {
  // every tool's sensitive flags: a routing correction does not know the command yet
  const flags = tools.flatMap((def) =>
    surfaceParams(def, 'cli')
      .filter(([, p]) => p.sensitive)
      .map(([k]) => `--${flagName(k)}`),
  );
  return words.some((w, i) => {
    const eq = w.indexOf('=');
    const value = flags.includes(w)
      ? words[i + 1]
      : eq > 0 && flags.includes(w.slice(0, eq))
        ? w.slice(eq + 1)
        : undefined;
    return value !== undefined && !/^[\w./~@:+-]*$/.test(value);
  });
}

/** `--flag value` words for the first example's value of a parameter. */
function exampleWords(def: AnyTool, param: string): string[] | undefined {
  const v = exampleValue(def, param);
  if (v === undefined) return undefined;
  return paramWords(param, def.parameters[param]!, flagKind(def.parameters[param]!) === 'repeat' ? [v] : v);
}

async function invoke(
  program: string,
  def: AnyTool,
  argv: readonly string[],
  io: CliIo,
): Promise<Envelope | string> {
  const parsed = parseArgv(def, argv);
  if (parsed.help) return commandHelp(program, def);
  const files = await resolveFiles(def, parsed.files, parsed.values, io, argv);
  missingRequired(def, parsed.values, argv);
  const params =
    fitsAsIs(def, parsed.values) ?? (await import('./validate.js')).validateInput(def, 'cli', parsed.values);
  const data = await def.run(params as never, { surface: 'cli', files });
  // the command wrote its own stdout (a protocol): nothing more may go there
  if (data === OWNS_STDOUT) return '';
  return ok(data ?? null);
}

/**
 * Apply corrections until the words parse, or until no further correction exists, without
 * reading a file or stdin and without running anything. One correction alone can stop at
 * the next mistake on the same flag (`--pr --pr 9` fixed to `--pr 42 --pr 9`, then "given
 * more than once"), and the agent would see the same error again.
 */
async function settle(
  program: string,
  tools: readonly AnyTool[],
  offered: readonly AnyTool[],
  words: readonly string[],
): Promise<readonly string[]> {
  const seen = new Set<string>();
  let cur = words;
  for (let n = 0; n < 16 && !seen.has(JSON.stringify(cur)); n++) {
    seen.add(JSON.stringify(cur));
    let prefix: readonly string[] = [];
    try {
      const r = resolveCommand(program, tools, cur, offered);
      if (r.kind !== 'command') return cur;
      prefix = commandPath(r.def);
      const parsed = parseArgv(r.def, r.rest);
      if (parsed.help) return cur;
      checkStdin(parsed.files, false);
      // the retry reads its files when it runs; here they only count as given
      for (const f of parsed.files) parsed.values[f.param] = '';
      missingRequired(r.def, parsed.values, r.rest);
      if (!parsed.files.length) (await import('./validate.js')).validateInput(r.def, 'cli', parsed.values);
      return cur;
    } catch (e) {
      if (!(e instanceof CliFailure) || !e.fix) return cur;
      cur = [...prefix, ...e.fix];
    }
  }
  return cur;
}

/** Build a CLI from definitions. Nothing here is specific to any one tool. */
export function createCli(opts: CliOptions): Cli {
  const program = opts.program ?? 'clibroker';
  const tools = opts.tools;
  const offered = opts.offered ?? tools;
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
        if (first === undefined || isHelpWord(first)) return emit(io, rootHelp(program, opts.blurb, tools));
        if (first === '--version') return emit(io, `${opts.version ?? '0.0.0'}\n`);
        const helpFor = first === 'help';
        // `help <topic> [command]` is the same page as `<topic> [command] --help`
        const r = resolveCommand(program, tools, helpFor ? [...argv.slice(1), '--help'] : argv, offered);
        if (r.kind === 'root') return emit(io, rootHelp(program, opts.blurb, tools));
        if (r.kind === 'topic') return emit(io, topicHelp(program, r.topic, r.commands));
        def = r.def;
        if (helpFor) return emit(io, commandHelp(program, def));
        return emit(io, await invoke(program, def, r.rest, io));
      } catch (e) {
        const error = errorFromThrown(e);
        // Every failure about a known command carries a complete invocation to copy, and,
        // when the mistake can be corrected, the agent's own command corrected (`retry`).
        // (a failure that names its own code is about the state, not the words: no example then)
        const example =
          def && !error.example && e instanceof CliFailure && !e.coded
            ? firstExample(program, def)
            : undefined;
        const fixed =
          e instanceof CliFailure && e.fix
            ? await settle(program, tools, offered, [...(def ? commandPath(def) : []), ...e.fix])
            : undefined;
        const retry = fixed && !echoesSensitive(tools, fixed) ? renderWords([program, ...fixed]) : undefined;
        return emit(io, failure({ ...error, ...(example ? { example } : {}), ...(retry ? { retry } : {}) }));
      }
    },
  };
}
