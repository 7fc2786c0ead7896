/**
 * `defineCli` / `defineExtension` (TypeScript) and `parseExtensionManifest` (JSON): one
 * validator behind all three. Shape first (zod), then every manifest rule on whatever
 * parts are well-formed, so one pass reports every problem; then one MANIFEST_INVALID.
 */
import { checkCredentialHosts, checkEgress } from './rules-hosts.js';
import { DEFAULT_HELP_MAX_DEPTH, checkHelpTree, checkOverrides, checkPreamble } from './rules-cli.js';
import { checkEnv } from './rules-env.js';
import { type PathSeg, ProblemList, is } from './problems.js';
import { manifestSchemas, shapeProblems } from './schema.js';
import { cliShapeFits, extensionShapeFits } from './shape-fits.js';
import { type CliManifest, DEFAULT_CREDENTIAL, type ExtensionManifest } from './types.js';

export const MAX_CLIS = 8;

function cliProblems(
  cli: unknown,
  at: readonly PathSeg[],
  egress: ReadonlySet<string> | undefined,
  out: ProblemList,
): void {
  // zod runs (and is loaded) only for a shape that is not certainly right
  if (!cliShapeFits(cli)) shapeProblems(manifestSchemas().cliSchema, cli, at, out);
  if (!is.obj(cli)) return;
  checkEnv(cli, at, out);
  checkCredentialHosts(cli.credentialHosts, at, egress, out);
  if (is.obj(cli.bootstrap)) checkPreamble(cli.bootstrap.preamble, at, out);
  checkOverrides(cli.wirePolicy, at, out);
  const crawl = cli.helpCrawl;
  const maxDepth =
    is.obj(crawl) && typeof crawl.maxDepth === 'number' ? crawl.maxDepth : DEFAULT_HELP_MAX_DEPTH;
  checkHelpTree(cli.helpTree, maxDepth, at, out);
}

/** The toolkit rules: a CLI's credential is always the connection, auth.default. */
function checkToolkit(
  cli: Record<string, unknown>,
  at: readonly PathSeg[],
  toolkits: Record<string, unknown>,
  out: ProblemList,
): void {
  const usingDefault = Object.entries(toolkits)
    .filter(([, tk]) => is.obj(tk) && tk.credential === DEFAULT_CREDENTIAL)
    .map(([name]) => name);
  const named = cli.toolkit;
  if (is.str(named)) {
    const tk = Object.hasOwn(toolkits, named) ? toolkits[named] : undefined;
    if (tk === undefined) {
      out.add(
        'MANIFEST_TOOLKIT_UNDECLARED',
        [...at, 'toolkit'],
        `one of the extension's toolkits (${Object.keys(toolkits).join(', ') || 'none declared'})`,
        named,
      );
    } else if (is.obj(tk) && tk.credential !== DEFAULT_CREDENTIAL) {
      out.add(
        'MANIFEST_TOOLKIT_NOT_DEFAULT_CREDENTIAL',
        [...at, 'toolkit'],
        `a toolkit bound to ${DEFAULT_CREDENTIAL}`,
        named,
      );
    }
    return;
  }
  if (named !== undefined) return; // wrong type: already a shape problem
  if (usingDefault.length === 0) {
    out.add(
      'MANIFEST_TOOLKIT_MISSING',
      [...at, 'toolkit'],
      `a toolkit bound to ${DEFAULT_CREDENTIAL} (declare one in toolkits)`,
    );
  } else if (usingDefault.length > 1) {
    out.add(
      'MANIFEST_TOOLKIT_AMBIGUOUS',
      [...at, 'toolkit'],
      `one of ${usingDefault.join(', ')} (several toolkits use ${DEFAULT_CREDENTIAL})`,
    );
  }
}

/** Every problem in an extension manifest (empty when valid). Never throws. */
export function extensionProblems(input: unknown): ProblemList {
  const out = new ProblemList();
  if (!extensionShapeFits(input)) shapeProblems(manifestSchemas().extensionSchema, input, [], out);
  if (!is.obj(input)) return out;
  checkEgress(input.egress, out);
  const egress = new Set(is.arr(input.egress) ? input.egress.filter(is.str) : []);
  const toolkits = is.obj(input.toolkits) ? input.toolkits : {};
  if (!is.arr(input.clis)) return out;
  if (input.clis.length > MAX_CLIS)
    out.add('MANIFEST_TOO_MANY_CLIS', ['clis'], `at most ${MAX_CLIS} CLIs`, `${input.clis.length} CLIs`);
  const ids = new Map<string, number>();
  input.clis.forEach((cli, i) => {
    const at = ['clis', i];
    cliProblems(cli, at, egress, out);
    if (!is.obj(cli)) return;
    checkToolkit(cli, at, toolkits, out);
    if (!is.str(cli.id)) return;
    const first = ids.get(cli.id);
    if (first === undefined) ids.set(cli.id, i);
    else
      out.add(
        'MANIFEST_DUPLICATE_CLI_ID',
        [...at, 'id'],
        `an id not used by another CLI (clis[${first}] has it)`,
        cli.id,
      );
  });
  return out;
}

/** Every problem in one CLI manifest validated on its own (no egress/toolkit context). */
export function cliManifestProblems(input: unknown): ProblemList {
  const out = new ProblemList();
  cliProblems(input, [], undefined, out);
  return out;
}

/**
 * Declare a vendor CLI. Checks what can be checked without the extension (shape, env,
 * hosts' form, preamble, overrides, help tree); defineExtension checks the rest.
 * @throws BrokerError MANIFEST_INVALID with `details.problems`
 */
export function defineCli<const T extends CliManifest>(cli: T): T {
  cliManifestProblems(cli).throwIfAny(`CLI manifest ${is.str(cli?.id) ? `"${cli.id}"` : ''}`.trim());
  return cli;
}

/**
 * Declare an extension: egress hosts, toolkits and up to 8 CLIs, every manifest rule.
 * @throws BrokerError MANIFEST_INVALID with `details.problems` listing every problem
 */
export function defineExtension<const T extends ExtensionManifest>(ext: T): T {
  extensionProblems(ext).throwIfAny(`extension manifest ${is.str(ext?.id) ? `"${ext.id}"` : ''}`.trim());
  return ext;
}

/**
 * The same manifest as JSON (text or already-parsed), for the CLI and hosts in other
 * languages. Returns a validated copy.
 * @throws BrokerError MANIFEST_INVALID (unparseable JSON is one MANIFEST_FIELD_INVALID at the root)
 */
export function parseExtensionManifest(json: string | unknown): ExtensionManifest {
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch {
      const out = new ProblemList();
      out.add('MANIFEST_FIELD_INVALID', [], 'a JSON object');
      out.throwIfAny('extension manifest');
    }
  }
  extensionProblems(value).throwIfAny(
    `extension manifest${is.obj(value) && is.str(value.id) ? ` "${value.id}"` : ''}`,
  );
  return structuredClone(value) as ExtensionManifest;
}
