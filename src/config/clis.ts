/**
 * One installed CLI at load: offered only when the broker would run it. Its image is
 * pinned, its entrypoint is that image's program, its tool name is free, and its
 * credentials can be planned — with the connection's kind and the extension's endpoint,
 * placeholders for the secrets, no mint and no network — as every call plans them.
 */
import { basename } from 'node:path';
import { describeCli, helpTreeFor } from '../help/index.js';
import { planCredentials } from '../credentials/binding.js';
import { isBrokerError } from '../errors.js';
import type { CliManifest } from '../manifest/types.js';
import { withSecrets } from './connection.js';
import type { ConfigProblems, PathSeg } from './problems.js';
import type { ConfiguredTool, InstalledExtension, PinnedImage } from './types.js';

const PLACEHOLDER = 'clibroker-config-check';

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
  /** tool name → the tool id that has it, filled as CLIs are checked */
  toolNames: Map<string, string>;
}

/** The tool for one CLI, or undefined (with problems added, unless its image already has one). */
export function checkCli(c: CliCheck, out: ConfigProblems): ConfiguredTool | undefined {
  const { ext, cli, at } = c;
  const id = `${ext.id}:cli:${cli.id}`;
  const name = `${cli.id}_cli`;
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
  const taken = c.toolNames.get(name);
  if (taken !== undefined)
    out.add(
      'CONFIG_TOOL_NAME_CONFLICT',
      [...at, 'id'],
      `the tool name ${name} is already offered by ${taken}; install only one of them`,
    );
  else c.toolNames.set(name, id);
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
  const img = c.images.get(image);
  return img
    ? {
        id,
        name,
        extensionId: ext.id,
        cliId: cli.id,
        description: describeCli(cli.id, helpTreeFor(cli.helpTree, img.executable)),
        image: img,
      }
    : undefined;
}
