/**
 * The toolkits an operator enables or disables per installed extension
 * (`extensions.<id>.toolkits.<toolkit>.enabled`). Every declared toolkit is enabled unless the
 * configuration says otherwise; a CLI is offered only while the toolkit that owns it is.
 */
import { type CliManifest, DEFAULT_CREDENTIAL, type ExtensionManifest } from '../manifest/types.js';
import type { ConfigProblems } from './problems.js';

/** The toolkit a CLI belongs to: its own `toolkit`, else the one toolkit bound to auth.default. */
export function owningToolkit(manifest: ExtensionManifest, cli: CliManifest): string | undefined {
  if (cli.toolkit !== undefined) return cli.toolkit;
  const usingDefault = Object.entries(manifest.toolkits ?? {}).filter(
    ([, tk]) => tk.credential === DEFAULT_CREDENTIAL,
  );
  // a valid manifest has exactly one (MANIFEST_TOOLKIT_MISSING / _AMBIGUOUS otherwise)
  return usingDefault.length === 1 ? usingDefault[0]![0] : undefined;
}

/**
 * The toolkits the configuration disables for one extension. A key the manifest does not
 * declare is the configuration's problem (CONFIG_FIELD_INVALID at that key): a typo would
 * otherwise leave a toolkit enabled that the operator meant to turn off.
 */
export function disabledToolkits(
  extensionId: string,
  manifest: ExtensionManifest,
  toolkits: Readonly<Record<string, { enabled: boolean }>> | undefined,
  out: ConfigProblems,
): Set<string> {
  const declared = Object.keys(manifest.toolkits ?? {});
  const disabled = new Set<string>();
  for (const [name, setting] of Object.entries(toolkits ?? {})) {
    if (!declared.includes(name)) {
      out.add(
        'CONFIG_FIELD_INVALID',
        ['extensions', extensionId, 'toolkits', name],
        `the manifest of ${extensionId} declares no such toolkit (it declares: ${declared.join(', ') || 'none'})`,
      );
      continue;
    }
    if (!setting.enabled) disabled.add(name);
  }
  return disabled;
}
