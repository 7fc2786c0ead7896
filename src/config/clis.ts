/**
 * One installed CLI at load: offered only when the broker would run it. Its image is
 * pinned, its entrypoint is that image's program, its tool name is its own, and its
 * credentials can be planned — with the connection's kind and the extension's endpoint,
 * placeholders for the secrets, no mint and no network — as every call plans them.
 *
 * What is wrong with one CLI is that CLI's problem, not the configuration's: the loader
 * withholds it and offers the rest, unless the configuration is `strict` (docs/config.md,
 * "Withheld at load").
 */
import { basename } from 'node:path';
import { describeCli, helpTreeFor } from '../help/index.js';
import { planCredentials } from '../credentials/binding.js';
import { isBrokerError } from '../errors.js';
import type { CliManifest } from '../manifest/types.js';
import { withSecrets } from './connection.js';
import { ConfigProblems, type PathSeg } from './problems.js';
import type { ConfigProblem, ConfiguredTool, InstalledExtension, PinnedImage } from './types.js';

const PLACEHOLDER = 'clibroker-config-check';

/**
 * The codes that withhold one CLI instead of refusing the configuration: each concerns that
 * CLI alone (its manifest entry, its binding, its name). A problem of an image's own pin, a
 * manifest, a secret or any other block still refuses the whole load.
 */
export const PER_TOOL_CODES = [
  'CONFIG_IMAGE_UNKNOWN',
  'CONFIG_IMAGE_ENTRYPOINT_MISMATCH',
  'CONFIG_TOOL_NAME_CONFLICT',
  'CONFIG_CLI_NOT_RUNNABLE',
] as const;

/** The longest tool name common MCP clients accept (`^[a-zA-Z0-9_-]{1,64}$`). */
export const TOOL_NAME_MAX = 64;

export interface CliCheck {
  ext: InstalledExtension;
  cli: CliManifest;
  at: readonly PathSeg[];
  /** every image key the configuration has, well-formed or not */
  imageNames: readonly string[];
  /** the images whose executable is well-formed */
  imageConfigs: ReadonlyMap<string, { executable: string }>;
  /** the images that passed every check */
  images: ReadonlyMap<string, PinnedImage>;
}

/** One installed CLI after its own checks, before its tool name is settled. */
export interface CliCandidate {
  /** `<extension>:cli:<id>` */
  id: string;
  extensionId: string;
  cliId: string;
  at: readonly PathSeg[];
  /** this CLI's own problems (codes of PER_TOOL_CODES) */
  problems: ConfigProblem[];
  /** undefined when it has a problem or its image failed a check (that image's problem refuses the load) */
  tool?: Omit<ConfiguredTool, 'name'>;
  /** the toolkit owning it, when the configuration disables that toolkit: withheld, not offered */
  disabledToolkit?: string;
}

/** Check one CLI; its problems are its own, so the caller decides to withhold it or refuse the load. */
export function checkCli(c: CliCheck): CliCandidate {
  const { ext, cli, at } = c;
  const out = new ConfigProblems();
  const id = `${ext.id}:cli:${cli.id}`;
  const image = cli.binary.image;
  const pinned = c.imageConfigs.get(image);
  if (!c.imageNames.includes(image)) {
    out.add(
      'CONFIG_IMAGE_UNKNOWN',
      [...at, 'binary', 'image'],
      `the CLI ${cli.id} runs image "${image}", which images does not pin (pinned: ${c.imageNames.join(', ') || 'none'})`,
    );
  } else if (
    pinned &&
    cli.binary.entrypoint !== pinned.executable &&
    cli.binary.entrypoint !== basename(pinned.executable)
  ) {
    out.add(
      'CONFIG_IMAGE_ENTRYPOINT_MISMATCH',
      [...at, 'binary', 'entrypoint'],
      `the CLI runs "${cli.binary.entrypoint}", but image "${image}" pins ${pinned.executable}: the entrypoint must be that path or ${basename(pinned.executable)}`,
    );
  }
  try {
    const connection = withSecrets(ext.connection, () => PLACEHOLDER);
    planCredentials({
      extension: ext.manifest,
      cliId: cli.id,
      connection,
      ...(ext.endpoint === undefined ? {} : { endpoint: ext.endpoint }),
    });
  } catch (e) {
    if (!isBrokerError(e)) throw e;
    out.add('CONFIG_CLI_NOT_RUNNABLE', at, `the broker would refuse every call of ${cli.id}: ${e.message}`);
  }
  const candidate: CliCandidate = { id, extensionId: ext.id, cliId: cli.id, at, problems: out.items };
  const img = c.images.get(image);
  if (img && out.items.length === 0)
    candidate.tool = {
      id,
      extensionId: ext.id,
      cliId: cli.id,
      description: describeCli(cli.id, helpTreeFor(cli.helpTree, img.executable)),
      image: img,
    };
  return candidate;
}

/**
 * Every CLI's tool name, adding CONFIG_TOOL_NAME_CONFLICT to the CLIs that cannot have one.
 *
 * `strict`: every CLI is `<id>_cli`, and each that repeats an earlier one's name has the
 * problem (the load is refused). Otherwise names do not depend on the order CLIs are
 * installed in: a CLI is `<id>_cli` when no other installed CLI has its id, else
 * `<extension>__<id>_cli`; a name over 64 characters, or one still held by another CLI, has
 * the problem on every CLI that holds it.
 */
export function nameTools(candidates: readonly CliCandidate[], strict: boolean): Map<CliCandidate, string> {
  const names = new Map<CliCandidate, string>();
  const conflict = (c: CliCandidate, message: string) => {
    const p = new ConfigProblems();
    p.add('CONFIG_TOOL_NAME_CONFLICT', [...c.at, 'id'], message);
    c.problems.push(...p.items);
  };
  if (strict) {
    const taken = new Map<string, string>();
    for (const c of candidates) {
      const name = `${c.cliId}_cli`;
      names.set(c, name);
      const by = taken.get(name);
      if (by === undefined) taken.set(name, c.id);
      else
        conflict(
          c,
          `the tool name ${name} is already offered by ${by}; install only one of them (without strict, each would be offered as <extension>__${c.cliId}_cli)`,
        );
    }
    return names;
  }
  const sameId = new Map<string, number>();
  for (const c of candidates) sameId.set(c.cliId, (sameId.get(c.cliId) ?? 0) + 1);
  const holders = new Map<string, CliCandidate[]>();
  for (const c of candidates) {
    const name = sameId.get(c.cliId)! > 1 ? `${c.extensionId}__${c.cliId}_cli` : `${c.cliId}_cli`;
    names.set(c, name);
    holders.set(name, [...(holders.get(name) ?? []), c]);
  }
  for (const [name, held] of holders) {
    for (const c of held) {
      if (name.length > TOOL_NAME_MAX)
        conflict(
          c,
          `another installed CLI is also ${c.cliId}_cli, and the qualified name ${name} is over ${TOOL_NAME_MAX} characters (MCP clients refuse it); shorten the extension or CLI id`,
        );
      else if (held.length > 1)
        conflict(
          c,
          `the tool name ${name} is also that of ${held
            .filter((o) => o !== c)
            .map((o) => o.id)
            .join(', ')}; install only one of them`,
        );
    }
  }
  return names;
}
