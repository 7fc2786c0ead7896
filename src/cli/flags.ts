/**
 * Flag facts shared by errors, help and the manifest: the suggestion candidates, the flag
 * list, the `expected` text, and the flag line `--comments|--comment '<json>'`.
 */
import { fileAlternative, flagKind, flagName, isRequired, surfaceParams } from './define.js';
import { flagExample } from './shell.js';
import type { Candidate } from './suggest.js';
import type { AnyTool, ParamDef, ValueSpec } from './types.js';

/** Every spelling of every flag, canonical names first so ties suggest them. */
export function flagCandidates(def: AnyTool): Candidate[] {
  const canon: Candidate[] = [];
  const alias: Candidate[] = [];
  for (const [name, p] of surfaceParams(def, 'cli')) {
    if (p.cliRest) continue;
    const f = flagName(name);
    canon.push({ name: f, canonical: f });
    if (p.type === 'boolean') canon.push({ name: `no-${f}`, canonical: `no-${f}` });
    for (const a of p.cliAliases ?? []) alias.push({ name: a, canonical: f });
    const alt = fileAlternative(def, name);
    if (alt) canon.push({ name: alt.fileFlag, canonical: alt.fileFlag });
  }
  return [...canon, ...alias];
}

/** `--a, --b, --b-file` — what an unknown flag's `expected` lists. */
export function flagList(def: AnyTool): string {
  const names = flagCandidates(def)
    .filter((c) => c.name === c.canonical && !c.name.startsWith('no-'))
    .map((c) => `--${c.name}`);
  return names.length ? names.join(', ') : '(this command takes no flags)';
}

/**
 * A value to fill in for a parameter the agent left without one: for an enum its default,
 * else its first value (never an example's: an example may show `--tier write`, and a
 * correction must not raise what the agent asked for); otherwise the first example's (one
 * element for a repeatable flag), else the default, else a number's minimum.
 */
export function exampleValue(def: AnyTool, param: string): unknown {
  const p = def.parameters[param]!;
  if (p.type === 'enum') return p.default ?? p.values[0];
  const ex = def.examples?.find((e) => e.params[param] !== undefined)?.params[param];
  const v = ex ?? p.default ?? (p.type === 'number' ? p.min : undefined);
  if (flagKind(p) === 'repeat' && Array.isArray(v)) return v[0];
  return v;
}

/** ` (one of: a, b)` for an enum or a list of enum values (a repeatable flag), else nothing. */
function allowedValues(p: ValueSpec): string {
  const e = p.type === 'array' ? p.items : p;
  return e.type === 'enum' ? ` (one of: ${e.values.join(', ')})` : '';
}

/**
 * `expected` for a flag: its example fragment when an example sets it, else its description;
 * an enum (or a repeatable enum flag) lists its allowed values after it.
 */
export function describeExpected(def: AnyTool, param: string, viaFile = false): string {
  const p = def.parameters[param]!;
  const alt = viaFile ? fileAlternative(def, param) : undefined;
  if (alt) return `--${alt.fileFlag} <path|->: ${alt.description}`;
  const ex = flagExample(def, param);
  return `${ex ?? p.describe}${allowedValues(p)}`;
}

function placeholder(s: ValueSpec): string {
  switch (s.type) {
    case 'enum':
      return s.values.join('|');
    case 'number':
      return s.integer ? '<integer>' : '<number>';
    case 'array':
      return placeholder(s.items);
    case 'object':
      return "'<json>'";
    default:
      return `<${s.type}>`;
  }
}

/** The value part after the flag names, e.g. `<string>`, `APPROVE|COMMENT`, `'<json>'`. */
export function valueHint(p: ParamDef): string {
  if (flagKind(p) === 'json') return "'<json>'";
  return placeholder(p);
}

/** `--comments|--comment '<json>'` (booleans: `--draft|--no-draft`). */
export function flagSignature(name: string, p: ParamDef): string {
  const f = flagName(name);
  if (p.cliRest) return '-- <args…>';
  const names = [f, ...(p.cliAliases ?? [])].map((n) => `--${n}`).join('|');
  if (p.type === 'boolean') return `${names}|--no-${f}`;
  if (p.cliPositional) return `<${f}> | ${names} ${valueHint(p)}`;
  return `${names} ${valueHint(p)}`;
}

/** The note after a flag's description: required, default, repeatable. */
export function flagNotes(p: ParamDef): string {
  const notes: string[] = [];
  if (isRequired(p)) notes.push('required');
  if (p.default !== undefined) notes.push(`default: ${JSON.stringify(p.default)}`);
  if (flagKind(p) === 'repeat') notes.push('repeatable');
  if (p.type === 'array' && p.items.type === 'object')
    notes.push('one object is taken as a one-element array');
  return notes.length ? ` (${notes.join('; ')})` : '';
}

/**
 * What every `--<param>-file` flag is for, said where it is listed: the shell never reads
 * the file (or a quoted heredoc on stdin), so nothing in it needs quoting.
 */
const fileFlagNote = (flag: string): string =>
  `- reads stdin. The shell never sees what it holds, so multi-line text, markdown, backticks, quotes and $(…) arrive as written (inline: --${flag} - <<'EOF' … EOF)`;

/** Flag blocks for help and manifest: signature, description, file alternative, `# example:`. */
export function flagLines(def: AnyTool, indent: string): string[] {
  const lines: string[] = [];
  for (const [name, p] of surfaceParams(def, 'cli')) {
    lines.push(`${indent}${flagSignature(name, p)}`);
    lines.push(`${indent}    ${p.describe}${flagNotes(p)}`);
    const ex = flagExample(def, name);
    if (ex) lines.push(`${indent}    # example: ${ex}`);
    const alt = fileAlternative(def, name);
    if (alt)
      lines.push(
        `${indent}--${alt.fileFlag} <path|->`,
        `${indent}    ${alt.description}; ${fileFlagNote(alt.fileFlag)}`,
      );
  }
  return lines;
}

/** `expected` for a gadget input: `{"title":"Buy milk"}` from an example, else the description. */
export function gadgetExpected(def: AnyTool, param: string): string {
  const p = def.parameters[param]!;
  const ex = def.examples?.find((e) => e.params[param] !== undefined);
  return `${ex ? JSON.stringify({ [param]: ex.params[param] }) : p.describe}${allowedValues(p)}`;
}
