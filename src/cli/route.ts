/**
 * Command routing with suggestions (issue 6). An unknown topic lists the topics in
 * `expected` and hints the corrected command with its trailing segment kept
 * (`did you mean 'clibroker vendor run'?`); a known topic with an unknown subcommand lists
 * that topic's subcommands; a far typo gets no hint but still its `expected`.
 */
import { fail } from './envelope.js';
import { suggest, type Candidate } from './suggest.js';
import type { AnyTool } from './types.js';

export type Route =
  | { kind: 'root' }
  | { kind: 'topic'; topic: string; commands: AnyTool[] }
  | { kind: 'command'; def: AnyTool; rest: readonly string[] };

function names(def: AnyTool): Candidate[] {
  return [{ name: def.name, canonical: def.name }, ...(def.cliAliases ?? []).map((a) => ({ name: a, canonical: def.name }))];
}

const isHelp = (t: string | undefined) => t === '--help' || t === '-h';

/**
 * Find the command `argv` names.
 * @throws CliFailure unknown-command
 */
export function resolveCommand(program: string, tools: readonly AnyTool[], argv: readonly string[]): Route {
  const [first, second] = argv;
  if (first === undefined || isHelp(first)) return { kind: 'root' };
  const topics = new Map<string, AnyTool[]>();
  const top: AnyTool[] = [];
  for (const t of tools) {
    if (t.namespace === undefined) top.push(t);
    else topics.set(t.namespace, [...(topics.get(t.namespace) ?? []), t]);
  }
  const direct = top.find((t) => names(t).some((c) => c.name === first));
  if (direct) return { kind: 'command', def: direct, rest: argv.slice(1) };
  const sub = topics.get(first);
  if (sub) {
    const listed = sub.map((d) => d.name).join(', ');
    if (second === undefined || second.startsWith('-')) {
      if (isHelp(second)) return { kind: 'topic', topic: first, commands: sub };
      fail('unknown-command', `'${program} ${first}' needs a command`, {
        expected: listed,
        hint: `run '${program} ${first} --help' to see them`,
        ...(second === undefined ? {} : { got: second }),
      });
    }
    const def = sub.find((d) => names(d).some((c) => c.name === second));
    if (def) return { kind: 'command', def, rest: argv.slice(2) };
    const close = suggest(second, [...sub.map((d) => names(d)[0]!), ...sub.flatMap((d) => names(d).slice(1))]);
    fail('unknown-command', `unknown command '${program} ${first} ${second}'`, {
      got: second,
      expected: listed,
      ...(close ? { hint: `did you mean '${program} ${first} ${close}'?` } : {}),
    });
  }
  const topicNames = [...topics.keys(), ...top.map((t) => t.name)];
  const close = suggest(first, [...topicNames.map((n) => ({ name: n, canonical: n })), ...top.flatMap((t) => names(t).slice(1))]);
  let hint: string | undefined;
  if (close) {
    const path = [program, close];
    const under = topics.get(close);
    if (under && second !== undefined && !second.startsWith('-')) {
      // Keep the trailing segment; correct it too when it is itself a near miss.
      const fixed = under.find((d) => d.name === second) ? second : suggest(second, under.flatMap(names));
      path.push(fixed ?? second);
    }
    hint = `did you mean '${path.join(' ')}'?`;
  }
  fail('unknown-command', `unknown command '${first}'`, {
    got: first,
    expected: topicNames.join(', '),
    ...(hint ? { hint } : {}),
  });
}

