/**
 * Which tools a host offers, and how a call names one:
 *
 *   the configuration's tools ─▶ withheld where their profile cannot (or may not) run here
 *   ─▶ withheld until the conformance verdict their image requires is in the store
 *   ─▶ under `strict`, any tool withheld (but a disabled toolkit's) refuses the start
 *
 * A call names a tool by id or name; one withheld or unknown is refused with the reason.
 */
import type { ConfiguredTool, LoadedConfig, WithheldTool } from '../config/types.js';
import { conformanceWithheld } from '../conformance/gate.js';
import { brokerError } from '../errors.js';
import { helpTreeFor } from '../help/index.js';
import type { HelpTree } from '../manifest/types.js';
import type { Store } from '../store/types.js';
import type { ToolListing } from './types.js';

/** The tools a host offers, and those it withholds with why. */
export interface HostTools {
  offered: ConfiguredTool[];
  withheld: WithheldTool[];
}

/**
 * The tools a configuration offers here. A configured isolated image never falls back to
 * plain: where bubblewrap cannot run, its CLIs are withheld (TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE).
 */
export async function offeredTools(
  config: Pick<LoadedConfig, 'tools' | 'withheld'>,
  probe?: () => Promise<string | undefined>,
  opts: { allowPlainProfile?: boolean } = { allowPlainProfile: true },
): Promise<HostTools> {
  const withheld: WithheldTool[] = [...config.withheld];
  const offered: ConfiguredTool[] = [];
  const check = probe ?? (await import('../sandbox/isolated.js')).isolationUnavailable;
  const isolation = config.tools.some((t) => t.image.profile === 'isolated') ? await check() : undefined;
  for (const tool of config.tools) {
    if (tool.image.profile === 'plain' && opts.allowPlainProfile !== true) {
      withheld.push({
        id: tool.id,
        name: tool.name,
        code: 'TOOL_VENDOR_CLI_PLAIN_NOT_ALLOWED',
        message: `image ${tool.image.name} has profile plain, which reads every file this process can; the host was not started with allowPlainProfile: true`,
      });
    } else if (tool.image.profile === 'isolated' && isolation !== undefined) {
      withheld.push({
        id: tool.id,
        name: tool.name,
        code: 'TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE',
        message: `image ${tool.image.name} asks for the isolated profile, which cannot run here: ${isolation}`,
      });
    } else offered.push(tool);
  }
  return { offered, withheld };
}

/**
 * The conformance gate: an image that requires a verdict is offered only after a pass for its
 * sha256 is in the store. A store that cannot answer fails the start: nothing is offered.
 */
export async function conformingTools(here: HostTools, store: Store): Promise<HostTools> {
  const gated = await conformanceWithheld(here.offered, store);
  return { offered: gated.offered, withheld: [...here.withheld, ...gated.withheld] };
}

/**
 * All or nothing: under `strict` a tool this host would withhold refuses the start, as the
 * loader refuses a CLI with a problem of its own; a toolkit the operator disabled is no problem.
 * @throws BrokerError CONFIG_INVALID
 */
export function refuseWithheldWhenStrict(
  config: Pick<LoadedConfig, 'strict'>,
  withheld: readonly WithheldTool[],
): void {
  const problems = withheld
    .filter((w) => w.code !== 'TOOL_VENDOR_CLI_TOOLKIT_DISABLED')
    .map((w) => ({ code: w.code, path: w.id, message: w.message }));
  if (config.strict && problems.length > 0) {
    throw brokerError(
      'CONFIG_INVALID',
      { what: 'the strict configuration', problems, shown: 3 },
      { details: { problems } },
    );
  }
}

/**
 * The tool a call names, by id or name.
 * @throws BrokerError TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE for a tool withheld because its
 *   profile cannot run here; TOOL_VENDOR_CLI_NOT_OFFERED for any other withheld or unknown name
 */
export function findTool(tools: HostTools, ref: unknown): ConfiguredTool {
  const name = typeof ref === 'string' ? ref : '';
  const hit = tools.offered.find((t) => t.id === name || t.name === name);
  if (hit) return hit;
  const held = tools.withheld.find((t) => t.id === name || t.name === name);
  if (held) {
    // the reason a host withholds a tool (the only one today); another would be not offered, its code in details
    if (held.code === 'TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE')
      throw brokerError(held.code, { tool: held.name, why: held.message }, { details: { tool: held.name } });
    throw brokerError(
      'TOOL_VENDOR_CLI_NOT_OFFERED',
      { withheld: held.name, why: held.message },
      { details: { tool: held.name, reasonCode: held.code } },
    );
  }
  const names = tools.offered.map((t) => t.name);
  throw brokerError(
    'TOOL_VENDOR_CLI_NOT_OFFERED',
    { name: name.slice(0, 80), offered: names },
    { details: { tools: names } },
  );
}

/** The offered tools as agents see them; `inputSchema` is the vendor CLI tool's input schema. */
export function listingsOf(
  offered: readonly ConfiguredTool[],
  inputSchema: (tool: ConfiguredTool) => Record<string, unknown>,
): ToolListing[] {
  return offered.map((t) => ({
    id: t.id,
    name: t.name,
    description: t.description,
    inputSchema: inputSchema(t),
  }));
}

/** Each tool's help tree, looked up once: the manifest's own, else the one shipped for the pinned program (gh, az, curl). */
export class HelpTrees {
  readonly #trees = new Map<string, HelpTree | undefined>();
  readonly #config: Pick<LoadedConfig, 'extensions'>;
  constructor(config: Pick<LoadedConfig, 'extensions'>) {
    this.#config = config;
  }
  of(tool: ConfiguredTool): HelpTree | undefined {
    if (!this.#trees.has(tool.id)) {
      const cli = this.#config.extensions
        .get(tool.extensionId)
        ?.manifest.clis.find((c) => c.id === tool.cliId);
      this.#trees.set(tool.id, helpTreeFor(cli?.helpTree, tool.image.executable));
    }
    return this.#trees.get(tool.id);
  }
}
