/**
 * Command routing with suggestions. An unknown topic lists the topics in `expected` and
 * hints the corrected command with its trailing segment kept (`did you mean 'clibroker
 * vendor run'?`); when that segment is no command of the topic, the hint still keeps it
 * and says what the topic has, but no correction is offered: that command does not exist. A known topic with an unknown
 * subcommand lists that topic's subcommands; a far typo gets no hint but still its
 * `expected`. `got` is the command as typed (`vendor urn`), and every correction the
 * router can make is carried as the whole corrected argv (`fix`).
 *
 * Every command routes when typed exactly; what a failure names (its lists, its
 * did-you-mean, its corrected command) comes only from the commands the surface offers, so
 * an agent's typo is never answered with an operator's command.
 */
import { isHelpWord, wantsHelp } from './argv.js';
import { echo, fail } from './envelope.js';
import { suggest, type Candidate } from './suggest.js';
import type { AnyTool } from './types.js';

export type Route =
  | { kind: 'root' }
  | { kind: 'topic'; topic: string; commands: AnyTool[] }
  | { kind: 'command'; def: AnyTool; rest: readonly string[] };

function names(def: AnyTool): Candidate[] {
  return [
    { name: def.name, canonical: def.name },
    ...(def.cliAliases ?? []).map((a) => ({ name: a, canonical: def.name })),
  ];
}

const isWord = (t: string | undefined): t is string => t !== undefined && !t.startsWith('-');

/**
 * A command of the topic named later in argv, as a word (`classify`) or as a flag
 * (`--classify`), and where: never a word that is the value of the flag before it.
 */
function laterCommand(
  sub: readonly AnyTool[],
  argv: readonly string[],
): { def: AnyTool; at: number } | undefined {
  for (let i = 1; i < argv.length && argv[i] !== '--'; i++) {
    const w = argv[i]!.replace(/^--(?=[a-z])/, '');
    const def = sub.find((d) => names(d).some((c) => c.name === w));
    if (!def) continue;
    const prev = argv[i - 1]!;
    const asFlag = argv[i] !== w;
    // `--cli run`: a value, unless the word before is a flag that takes none
    const isValue = !asFlag && prev.startsWith('--') && !prev.includes('=') && i > 1;
    if (!isValue) return { def, at: i };
  }
  return undefined;
}

/** Commands by topic, and the top-level ones, in the order given. */
function byTopic(tools: readonly AnyTool[]): { topics: Map<string, AnyTool[]>; top: AnyTool[] } {
  const topics = new Map<string, AnyTool[]>();
  const top: AnyTool[] = [];
  for (const t of tools) {
    if (t.namespace === undefined) top.push(t);
    else topics.set(t.namespace, [...(topics.get(t.namespace) ?? []), t]);
  }
  return { topics, top };
}

/**
 * Find the command `argv` names among `tools`. A failure names only commands of `offered`
 * (default: all of `tools`).
 * @throws CliFailure unknown-command
 */
export function resolveCommand(
  program: string,
  tools: readonly AnyTool[],
  argv: readonly string[],
  offered: readonly AnyTool[] = tools,
): Route {
  const [first, second] = argv;
  if (first === undefined || isHelpWord(first)) return { kind: 'root' };
  const all = byTopic(tools);
  // what a failure may name: the offered commands only
  const { topics, top } = byTopic(offered);
  if (first === program && argv.length > 1) {
    fail('unknown-command', `'${program}' given twice`, {
      got: program,
      hint: `the program name is not a command; retry drops it`,
      fix: argv.slice(1),
    });
  }
  if (/\s/.test(first) && !/['"\\`$]/.test(first)) {
    // the command (or the whole command line) quoted into one word: split it when nothing
    // in it needs the shell's quoting
    const words = first.trim().split(/\s+/);
    if (
      topics.has(words[0]!) ||
      top.some((t) => names(t).some((c) => c.name === words[0])) ||
      words[0] === program
    ) {
      fail('unknown-command', `unknown command '${echo(first, 60)}': several words in one argument`, {
        got: echo(first, 60),
        hint: 'the shell passed them as one argument (quoted together); give them as separate words',
        fix: [...(words[0] === program ? words.slice(1) : words), ...argv.slice(1)],
      });
    }
  }
  // `classify policy`: the command before its topic
  const swapped = isWord(second) && topics.get(second)?.find((d) => names(d).some((c) => c.name === first));
  const real =
    all.topics.get(first)?.some((d) => names(d).some((c) => c.name === second)) ||
    all.top.some((t) => names(t).some((c) => c.name === first));
  if (swapped && !real) {
    fail('unknown-command', `unknown command '${echo(`${first} ${second}`, 60)}'`, {
      got: `${first} ${second}`,
      hint: `the topic comes first: '${program} ${second} ${swapped.name}'`,
      fix: [second, swapped.name, ...argv.slice(2)],
    });
  }
  const direct = all.top.find((t) => names(t).some((c) => c.name === first));
  if (direct) return { kind: 'command', def: direct, rest: argv.slice(1) };
  // the command as typed: the words before the first flag, at most two
  const typed = isWord(second) ? `${first} ${second}` : first;
  const every = all.topics.get(first);
  if (every) {
    // help pages and exact commands route whatever the surface offers
    if (second === 'help') {
      // `vendor help run` is `vendor run --help`; `policy help` is the topic page
      const of = every.find((d) => names(d).some((c) => c.name === argv[2]));
      return of
        ? { kind: 'command', def: of, rest: ['--help'] }
        : { kind: 'topic', topic: first, commands: every };
    }
    if (!isWord(second) && wantsHelp(argv)) return { kind: 'topic', topic: first, commands: every };
    const def = isWord(second) ? every.find((d) => names(d).some((c) => c.name === second)) : undefined;
    if (def) return { kind: 'command', def, rest: argv.slice(2) };
  }
  const sub = topics.get(first);
  if (sub) {
    const listed = sub.map((d) => d.name).join(', ');
    if (!isWord(second)) {
      // The command further on (`policy --method GET classify …`, `policy --classify …`):
      // moved to its place, so the retry does not leave it behind as a stray word.
      const later = laterCommand(sub, argv);
      const only = later ?? (sub.length === 1 ? { def: sub[0]!, at: -1 } : undefined);
      const rest = argv.slice(1).filter((_, j) => j + 1 !== only?.at);
      fail('unknown-command', `'${program} ${first}' needs a command: ${listed}`, {
        expected: listed,
        hint: only
          ? `did you mean '${program} ${first} ${only.def.name}'?`
          : `run '${program} ${first} --help' to see them`,
        got: first,
        ...(only ? { fix: [first, only.def.name, ...rest] } : {}),
      });
    }
    const close = suggest(second, [
      ...sub.map((d) => names(d)[0]!),
      ...sub.flatMap((d) => names(d).slice(1)),
    ]);
    fail(
      'unknown-command',
      `unknown command '${program} ${first} ${echo(second, 60)}'; '${program} ${first}' has: ${listed}`,
      {
        got: typed,
        expected: listed,
        ...(close
          ? { hint: `did you mean '${program} ${first} ${close}'?`, fix: [first, close, ...argv.slice(2)] }
          : {}),
      },
    );
  }
  const topicNames = [...topics.keys(), ...top.map((t) => t.name)];
  const close = suggest(first, [
    ...topicNames.map((n) => ({ name: n, canonical: n })),
    ...top.flatMap((t) => names(t).slice(1)),
  ]);
  let hint: string | undefined;
  let fix: string[] | undefined;
  if (close) {
    const under = topics.get(close);
    if (under && isWord(second)) {
      // Keep the trailing segment; correct it too when it is itself a near miss.
      const fixed = under.find((d) => names(d).some((c) => c.name === second))
        ? second
        : suggest(second, under.flatMap(names));
      if (fixed) {
        hint = `did you mean '${program} ${close} ${fixed}'?`;
        fix = [close, fixed, ...argv.slice(2)];
      } else {
        // A topic typo with an unknown command: the command kept as typed (the agent finds its
        // own words), and what the topic has. No retry: the topic has no such command.
        hint = `did you mean '${program} ${close} ${echo(second, 60)}'? (the topic corrected; '${close}' has no '${echo(second, 60)}', it has: ${under.map((d) => d.name).join(', ')})`;
      }
    } else if (under) {
      hint = `did you mean '${program} ${close}'? It has: ${under.map((d) => d.name).join(', ')}`;
      if (under.length === 1) fix = [close, under[0]!.name, ...argv.slice(1)];
    } else {
      hint = `did you mean '${program} ${close}${isWord(second) ? ` ${echo(second, 60)}` : ''}'?`;
      fix = [close, ...argv.slice(1)];
    }
  }
  fail('unknown-command', `unknown command '${echo(typed, 60)}'`, {
    got: typed,
    expected: topicNames.join(', '),
    ...(hint ? { hint } : {}),
    ...(fix ? { fix } : {}),
  });
}
