/**
 * `--help` text for the root, a topic and a command. The command page lists FLAGS (the
 * same flag lines as the manifest), OUTPUT and EXAMPLES rendered as copy-pasteable shell.
 * This module is on the cold-start path: it imports nothing heavy.
 */
import { commandPath, fileAlternative, flagName, isRequired, surfaceParams } from './define.js';
import { flagLines, flagSignature } from './flags.js';
import { renderExample } from './shell.js';
import type { AnyTool } from './types.js';

/** The contract every command follows, said once in root help and the manifest. */
export const ENVELOPE_LINES = [
  'Every command prints one JSON envelope on stdout:',
  '  {"success":true,"data":…}  or',
  '  {"success":false,"error":{"type","flag","message","got","expected","hint","example","retry","code","details"}}',
  'and on failure one line on stderr. Exit 0 on success, 1 on failure, 2 for an unknown command.',
  'error.retry, when present, is your command with the mistake corrected: check it, then run it as is.',
  'error.code is the stable failure code (COMMAND_INPUT_INVALID, POLICY_BLOCKED, CLI_APPROVAL_PENDING, …); error.details carries its data.',
];

function summary(def: AnyTool): string {
  return def.description.split('\n')[0]!.trim();
}

/** `  policy classify   Classify one HTTP request…` lines, aligned. */
export function commandTable(defs: readonly AnyTool[], indent = '  '): string[] {
  const names = defs.map((d) => commandPath(d).join(' '));
  const w = Math.max(0, ...names.map((n) => n.length));
  return defs.map((d, i) => `${indent}${names[i]!.padEnd(w)}   ${summary(d)}`);
}

/** Root help: usage, every command, the envelope contract. */
export function rootHelp(program: string, blurb: string, defs: readonly AnyTool[]): string {
  return [
    `${program} — ${blurb}`,
    '',
    'USAGE',
    `  ${program} <topic> <command> [flags]`,
    `  ${program} <topic> <command> --help`,
    '',
    'COMMANDS',
    ...(defs.length ? commandTable(defs) : ['  (none yet)']),
    '',
    ...ENVELOPE_LINES,
    '',
  ].join('\n');
}

/** Topic help: the topic's subcommands. */
export function topicHelp(program: string, topic: string, defs: readonly AnyTool[]): string {
  return [
    `${program} ${topic} — commands`,
    '',
    'USAGE',
    `  ${program} ${topic} <command> [flags]`,
    '',
    'COMMANDS',
    ...commandTable(defs),
    '',
  ].join('\n');
}

/** `clibroker policy classify --method <…> --url <…> [flags]`. */
export function usageLine(program: string, def: AnyTool): string {
  const parts = [program, ...commandPath(def)];
  let optional = false;
  let rest = '';
  for (const [name, p] of surfaceParams(def, 'cli')) {
    const alt = fileAlternative(def, name);
    if (p.cliRest) rest = '-- <args…>';
    else if (p.cliPositional) parts.push(isRequired(p) ? `<${flagName(name)}>` : `[<${flagName(name)}>]`);
    else if (!isRequired(p)) optional = true;
    else
      parts.push(alt ? `(${flagSignature(name, p)} | --${alt.fileFlag} <path|->)` : flagSignature(name, p));
  }
  if (optional) parts.push('[flags]');
  if (rest) parts.push(rest);
  return parts.join(' ');
}

/** A command's help page. */
export function commandHelp(program: string, def: AnyTool): string {
  const [first, ...more] = def.description.trim().split('\n');
  const lines = [`${program} ${commandPath(def).join(' ')} — ${first}`];
  if (more.length) lines.push(...more.map((l) => l.trimEnd()));
  lines.push(
    '',
    'USAGE',
    `  ${usageLine(program, def)}`,
    '',
    'FLAGS',
    ...flagLines(def, '  '),
    '  -h|--help',
    '      show this help',
  );
  lines.push('', 'OUTPUT', `  data: ${def.outputShape}`);
  const examples = def.examples ?? [];
  if (examples.length) {
    lines.push('', 'EXAMPLES');
    for (const ex of examples) {
      lines.push(
        `  # ${ex.comment}`,
        `  ${renderExample(program, def, ex.params as Record<string, unknown>)}`,
      );
      if (ex.output !== undefined) lines.push(`  # → ${JSON.stringify({ success: true, data: ex.output })}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
