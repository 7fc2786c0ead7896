/**
 * `defineTool` and the facts every generator derives from a definition: flag names, which
 * parameters each surface sees, how a parameter travels on the command line. Keeping the
 * derivations here is what lets a new tool need no edits anywhere else.
 */
import type { AnyTool, FileInputAlternative, ParamDef, Params, ToolDefinition, ValueSpec } from './types.js';

const NAME_RE = /^[a-z][a-z0-9-]*$/;
const PARAM_RE = /^[A-Za-z][A-Za-z0-9]*$/;

/**
 * What a command's `run` returns when it has used stdout itself (`serve` speaks a protocol
 * there): the CLI then prints no envelope. A failure thrown before it wrote anything is still
 * printed as the usual failure envelope.
 */
export const OWNS_STDOUT: unique symbol = Symbol('clibroker.ownsStdout');

/**
 * Declare a tool. Checks the definition once (names, cliOnly/gadgetOnly exclusivity, file
 * alternatives and examples naming real parameters) and returns it unchanged, typed.
 * @throws Error naming the tool and the problem
 */
export function defineTool<const P extends Params, O>(def: ToolDefinition<P, O>): ToolDefinition<P, O> {
  const where = `tool ${commandPath(def as unknown as AnyTool).join(' ')}`;
  const fail = (msg: string): never => {
    throw new Error(`${where}: ${msg}`);
  };
  if (!NAME_RE.test(def.name)) fail(`name '${def.name}' must be kebab-case`);
  if (def.namespace !== undefined && !NAME_RE.test(def.namespace))
    fail(`namespace '${def.namespace}' must be kebab-case`);
  const flags = new Set<string>();
  const claim = (flag: string) => {
    if (flags.has(flag)) fail(`flag --${flag} is declared twice`);
    flags.add(flag);
  };
  let rest = 0;
  let positional = 0;
  for (const [name, p] of Object.entries(def.parameters)) {
    if (p.cliPositional) {
      positional++;
      if ((p.type !== 'string' && p.type !== 'enum') || p.gadgetOnly || p.cliRest)
        fail(`cliPositional parameter '${name}' must be a string or enum flag`);
    }
    if (!PARAM_RE.test(name)) fail(`parameter '${name}' must be camelCase letters and digits`);
    if (p.cliOnly && p.gadgetOnly) fail(`parameter '${name}' is both cliOnly and gadgetOnly`);
    if (p.cliRest) {
      rest++;
      if (p.type !== 'array' || p.items.type !== 'string')
        fail(`cliRest parameter '${name}' must be a string array`);
    }
    if (p.gadgetOnly || p.cliRest) continue;
    claim(flagName(name));
    if (p.type === 'boolean') claim(`no-${flagName(name)}`);
    for (const a of p.cliAliases ?? []) claim(a);
  }
  if (rest > 1) fail('at most one cliRest parameter');
  if (positional > 1) fail('at most one cliPositional parameter');
  for (const f of def.cli?.fileInputAlternatives ?? []) {
    const p = def.parameters[f.paramName];
    if (!p) fail(`file alternative names unknown parameter '${f.paramName}'`);
    else if (p.gadgetOnly) fail(`file alternative for gadgetOnly parameter '${f.paramName}'`);
    if (f.parseAs === 'text' && p?.type !== 'string')
      fail(`text file alternative for non-string '${f.paramName}'`);
    claim(f.fileFlag);
  }
  for (const ex of def.examples ?? []) {
    for (const k of Object.keys(ex.params))
      if (!def.parameters[k]) fail(`example '${ex.comment}' uses unknown parameter '${k}'`);
    if (ex.viaFile === undefined) continue;
    const alt = fileAlternative(def as unknown as AnyTool, ex.viaFile);
    const v = (ex.params as Record<string, unknown>)[ex.viaFile];
    if (!alt) fail(`example '${ex.comment}' passes '${ex.viaFile}' through a file flag it does not have`);
    if (v === undefined)
      fail(`example '${ex.comment}' passes '${ex.viaFile}' through its file flag without a value`);
    if (alt?.parseAs === 'text' && (typeof v !== 'string' || !v.endsWith('\n')))
      fail(`example '${ex.comment}': text given through a heredoc ends with a newline`);
  }
  return def;
}

/** `dryRun` → `dry-run`: flags are kebab-case, gadget keys keep the parameter name. */
export function flagName(param: string): string {
  return param.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** `['policy', 'classify']`, or `['demo']` for a top-level command. */
export function commandPath(def: AnyTool): string[] {
  return def.namespace === undefined ? [def.name] : [def.namespace, def.name];
}

/** How a parameter is written on the command line. */
export type FlagKind = 'scalar' | 'boolean' | 'repeat' | 'json' | 'rest';

function isPrimitive(s: ValueSpec): boolean {
  return s.type === 'string' || s.type === 'number' || s.type === 'boolean' || s.type === 'enum';
}

/** Scalars take one value, booleans are natural, primitive arrays repeat, the rest is JSON. */
export function flagKind(p: ParamDef): FlagKind {
  if (p.cliRest) return 'rest';
  if (p.type === 'boolean') return 'boolean';
  if (p.type === 'array') return isPrimitive(p.items) ? 'repeat' : 'json';
  if (p.type === 'object') return 'json';
  return 'scalar';
}

/** The parameters a surface accepts, in declaration order. */
export function surfaceParams(def: AnyTool, surface: 'cli' | 'gadget'): [string, ParamDef][] {
  return Object.entries(def.parameters).filter(([, p]) => (surface === 'cli' ? !p.gadgetOnly : !p.cliOnly));
}

/** The parameter the first bare word before `--` fills, if the tool has one. */
export function positionalParam(def: AnyTool): string | undefined {
  return Object.entries(def.parameters).find(([, p]) => p.cliPositional)?.[0];
}

/** Required on a surface: not optional, no default. */
export function isRequired(p: ParamDef): boolean {
  return !p.optional && p.default === undefined;
}

/** The file alternative for a parameter, if it has one. */
export function fileAlternative(def: AnyTool, param: string): FileInputAlternative | undefined {
  return def.cli?.fileInputAlternatives?.find((f) => f.paramName === param);
}

/** Sanitise to the tool-name charset all three function-calling APIs accept: `[A-Za-z0-9_-]{1,64}`. */
export function toolName(raw: string): string {
  const s = raw.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return s === '' ? '_' : s;
}

/** `policy_classify` for `clibroker policy classify`; `gh_cli` for a vendor CLI. */
export function gadgetName(def: AnyTool): string {
  return toolName(commandPath(def).join('_'));
}
