/**
 * What `clibroker config validate` shows: the tools a configuration offers and what an
 * operator should know about it, or every problem that refuses it.
 */
import { stat } from 'node:fs/promises';
import { isBrokerError } from '../errors.js';
import { loadConfig } from './load.js';
import type { ConfigProblem, LoadedConfig, WithheldTool } from './types.js';

/** Something allowed that an operator should decide on knowingly. */
export interface ConfigWarning {
  path: string;
  message: string;
}

export type ConfigValidation =
  | {
      valid: true;
      file: string;
      tools: { id: string; name: string; image: string; profile: string }[];
      withheld: WithheldTool[];
      warnings: ConfigWarning[];
    }
  | { valid: false; problems: ConfigProblem[] };

/** The warnings of a loaded configuration. */
export function configWarnings(c: LoadedConfig): ConfigWarning[] {
  const out: ConfigWarning[] = [];
  const used = new Set(c.tools.map((t) => t.image.name));
  for (const img of c.images.values()) {
    const at = `images.${img.name}`;
    if (!used.has(img.name)) out.push({ path: at, message: 'no installed CLI runs this image' });
    if (img.profile !== 'plain') continue;
    out.push({
      path: `${at}.profile`,
      message:
        "the CLI runs with this process's own file access: it could read the configuration and secret files; use profile isolated where bubblewrap is available",
    });
    if (img.readOnlyPaths.length > 0)
      out.push({ path: `${at}.readOnlyPaths`, message: 'readOnlyPaths apply to the isolated profile only' });
  }
  if (c.store === ':memory:')
    out.push({
      path: 'store',
      message: 'an in-memory store: approvals, tier switches and audit events are lost when the process ends',
    });
  return out;
}

/** Load `file` and describe it; a refused configuration is data, any other failure throws. */
export async function validateConfigFile(file: string): Promise<ConfigValidation> {
  let c: LoadedConfig;
  try {
    c = await loadConfig(file);
  } catch (e) {
    if (isBrokerError(e) && e.code === 'CONFIG_INVALID')
      return { valid: false, problems: (e.details?.['problems'] ?? []) as ConfigProblem[] };
    throw e;
  }
  const warnings = configWarnings(c);
  const st = await stat(c.file ?? file);
  if ((st.mode & 0o022) !== 0) {
    warnings.unshift({
      path: '(root)',
      message: `the configuration file has mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}: group or other may rewrite it (its pins, its secret references); chmod go-w it`,
    });
  }
  return {
    valid: true,
    file: c.file ?? file,
    tools: c.tools.map((t) => ({ id: t.id, name: t.name, image: t.image.name, profile: t.image.profile })),
    withheld: [...c.withheld],
    warnings,
  };
}
