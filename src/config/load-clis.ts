/**
 * The configuration's programs, as steps of a load: the images pinned, each extension
 * installed (its connection's secrets present, its manifest hashed and valid), each of its
 * CLIs checked, then every CLI offered under its settled tool name or withheld.
 */
import { type CliCandidate, checkCli, nameTools } from './clis.js';
import { resolveConnection, secretFields } from './connection.js';
import { checkImage } from './images.js';
import { entries, isObj, type Load, type Obj } from './load-context.js';
import { checkManifest } from './manifests.js';
import { configSchemas } from './schema.js';
import { disabledToolkits, owningToolkit } from './toolkits.js';
import type {
  ConfigProblem,
  ConfiguredTool,
  ConnectionConfig,
  InstalledExtension,
  PinnedImage,
  WithheldTool,
} from './types.js';

/** The images: those that passed every check, and every well-formed one with its profile. */
export interface Images {
  pinned: Map<string, PinnedImage>;
  configs: Map<string, { executable: string; profile: 'isolated' | 'plain' }>;
}

/** Check each image whose path and hash are well-formed: the file is there and hashes to its pin. */
export async function pinImages(load: Load): Promise<Images> {
  const { imageSchema } = configSchemas();
  const images: Images = { pinned: new Map(), configs: new Map() };
  for (const [name, raw] of entries(load.cfg['images'])) {
    // the file is checked whenever its path and hash are well-formed, so a typo in a sibling field hides nothing
    const r = imageSchema.safeParse(raw);
    const rawImg = isObj(raw) ? raw : {};
    const exe = imageSchema.shape.executable.safeParse(rawImg['executable']);
    const sha = imageSchema.shape.sha256.safeParse(rawImg['sha256']);
    if (!exe.success || !sha.success) continue;
    // a fallback only when the load already has a shape problem
    const img = r.success ? r.data : { executable: exe.data, sha256: sha.data, profile: 'isolated' as const };
    images.configs.set(name, img);
    const pinned = await checkImage(name, img, load.out);
    // the image's own word, else the configuration's, else required: fail closed, an
    // unverified program is not offered until a verdict or the operator's waiver says so
    const gate = r.success
      ? (r.data.conformance ?? (load.cfg['conformance'] === 'optional' ? undefined : 'required'))
      : undefined;
    if (pinned) images.pinned.set(name, gate === undefined ? pinned : { ...pinned, conformance: gate });
  }
  return images;
}

/** Install each extension, in order, and check each CLI of those installed. */
export async function installExtensions(
  load: Load,
  images: Images,
): Promise<{ extensions: Map<string, InstalledExtension>; candidates: CliCandidate[] }> {
  const extensions = new Map<string, InstalledExtension>();
  const candidates: CliCandidate[] = [];
  for (const [key, raw] of entries(load.cfg['extensions'])) {
    const rawObj = isObj(raw) ? raw : {};
    const ext = await installExtension(load, key, raw);
    if (!ext) continue;
    extensions.set(key, ext);
    candidates.push(...cliCandidates(load, ext, rawObj, images));
  }
  return { extensions, candidates };
}

/**
 * One extension: its connection's secrets present, its manifest hashed and valid. Each part
 * is checked whenever its own fields are well-formed; the extension is installed only when
 * all are.
 */
export async function installExtension(
  load: Load,
  key: string,
  raw: unknown,
): Promise<InstalledExtension | undefined> {
  const { connectionSchema, installSchema } = configSchemas();
  const r = installSchema.safeParse(raw);
  const rawObj = isObj(raw) ? raw : {};
  const conn = connectionSchema.safeParse(rawObj['connection']);
  const connection = conn.success ? resolveConnection(conn.data as ConnectionConfig, load.abs) : undefined;
  if (connection)
    for (const [field, ref] of secretFields(connection))
      await load.checkRef(ref, ['extensions', key, 'connection', field]);
  const m = installSchema.shape.manifest.safeParse(rawObj['manifest']);
  const sha = installSchema.shape.sha256.safeParse(rawObj['sha256']);
  const endpoint = installSchema.shape.endpoint.safeParse(rawObj['endpoint']);
  if (!m.success || !sha.success) return undefined;
  const manifestFile = typeof m.data === 'string' ? load.abs(m.data) : undefined;
  const manifest = await checkManifest(key, m.data, manifestFile, sha.data, load.out);
  if (!manifest || !connection || !endpoint.success) return undefined;
  const ext: InstalledExtension = {
    id: key,
    manifest,
    sha256: sha.data,
    connection,
    identity: r.data?.identity ?? 'assigned',
    assignment: r.data?.assignment ?? 'default',
  };
  if (endpoint.data !== undefined) ext.endpoint = endpoint.data;
  return ext;
}

/** Each CLI of an installed extension, checked against the images, marked when its toolkit is disabled. */
export function cliCandidates(
  load: Load,
  ext: InstalledExtension,
  rawExt: Obj,
  images: Images,
): CliCandidate[] {
  const { installSchema } = configSchemas();
  const imageNames = entries(load.cfg['images']).map(([n]) => n);
  const toolkits = installSchema.shape.toolkits.safeParse(rawExt['toolkits']);
  const disabled = disabledToolkits(
    ext.id,
    ext.manifest,
    toolkits.success ? toolkits.data : undefined,
    load.out,
  );
  return ext.manifest.clis.map((cli, i) => {
    const candidate = checkCli({
      ext,
      cli,
      at: ['extensions', ext.id, 'manifest', 'clis', i],
      imageNames,
      imageConfigs: images.configs,
      images: images.pinned,
    });
    const toolkit = owningToolkit(ext.manifest, cli);
    if (toolkit !== undefined && disabled.has(toolkit)) candidate.disabledToolkit = toolkit;
    return candidate;
  });
}

/** The withheld entry of a CLI whose toolkit the configuration disables. */
function toolkitDisabled(c: CliCandidate, toolkit: string): ConfigProblem {
  const also = c.problems.length > 0 ? ` (also ${c.problems.map((p) => p.code).join(', ')})` : '';
  return {
    code: 'TOOL_VENDOR_CLI_TOOLKIT_DISABLED',
    path: `extensions.${c.extensionId}.toolkits.${toolkit}.enabled`,
    message: `the CLI ${c.cliId} belongs to the toolkit "${toolkit}", which the configuration disables; set extensions.${c.extensionId}.toolkits.${toolkit}.enabled to true to offer it${also}`,
  };
}

/** The CLIs settled: offered under their tool names, or withheld; `perTool` is every CLI's own problems. */
export interface SettledTools {
  tools: ConfiguredTool[];
  withheld: WithheldTool[];
  perTool: ConfigProblem[];
}

/**
 * Each CLI offered, or withheld for its own problems (strict: those refuse the load, which
 * the caller decides). A disabled toolkit withholds its CLIs whatever else is wrong with them.
 */
export function settleTools(candidates: readonly CliCandidate[], strict: boolean): SettledTools {
  const names = nameTools(candidates, strict);
  const settled: SettledTools = { tools: [], withheld: [], perTool: [] };
  for (const c of candidates) {
    const name = names.get(c)!;
    if (c.disabledToolkit !== undefined) {
      // the operator's choice, not a problem: withheld whatever else is wrong with the CLI
      // (its own problems still count below), and never a reason for strict to refuse
      const off = toolkitDisabled(c, c.disabledToolkit);
      settled.withheld.push({ id: c.id, name, ...off });
      settled.perTool.push(...c.problems);
      continue;
    }
    const [first, ...more] = c.problems;
    if (first === undefined) {
      if (c.tool) settled.tools.push({ ...c.tool, name });
      continue;
    }
    settled.perTool.push(...c.problems);
    const also = more.length > 0 ? ` (also ${more.map((p) => p.code).join(', ')})` : '';
    settled.withheld.push({
      id: c.id,
      name,
      code: first.code,
      message: `${first.message}${also}`,
      path: first.path,
    });
  }
  return settled;
}
