/**
 * The files a deployment consists of, read from the configuration's JSON itself (so they are
 * checked even when the loader refuses it): the configuration, every secret, every manifest,
 * the store, the socket, the images and the token references.
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A secret reference with its configuration path. */
export type SecretAt = { at: string } & ({ file: string } | { env: string });

export interface Deployment {
  config: string;
  secrets: SecretAt[];
  /** the token secrets (a subset of `secrets`): daemon.executorToken and serve's */
  tokens: SecretAt[];
  manifests: { at: string; file: string }[];
  /** a SQLite file (absent for :memory:, a PostgreSQL store (its URL's reference is among `secrets`), or none) */
  store?: string;
  socket?: string;
  /** upstream.caFile: the CAs the broker trusts for vendor TLS */
  caFile?: string;
  images: { name: string; profile: string; readOnlyPaths: string[] }[];
}

const secretRef = (v: unknown, at: string, abs: (p: string) => string): SecretAt | undefined => {
  if (!isObj(v)) return undefined;
  const keys = Object.keys(v);
  if (keys.length !== 1) return undefined;
  if (typeof v['file'] === 'string' && v['file'] !== '') return { at, file: abs(v['file']) };
  if (typeof v['env'] === 'string' && v['env'] !== '') return { at, env: v['env'] };
  return undefined;
};

/** The deployment a configuration file describes; undefined when it is not readable JSON. */
export async function readDeployment(configFile: string): Promise<Deployment | undefined> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(configFile, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isObj(raw)) return undefined;
  const base = dirname(configFile);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  const d: Deployment = { config: configFile, secrets: [], tokens: [], manifests: [], images: [] };
  const extensions = isObj(raw['extensions']) ? raw['extensions'] : {};
  for (const [id, ext] of Object.entries(extensions)) {
    if (!isObj(ext)) continue;
    if (typeof ext['manifest'] === 'string' && ext['manifest'] !== '')
      d.manifests.push({ at: `extensions.${id}.manifest`, file: abs(ext['manifest']) });
    const conn = isObj(ext['connection']) ? ext['connection'] : {};
    for (const [field, v] of Object.entries(conn)) {
      const ref = secretRef(v, `extensions.${id}.connection.${field}`, abs);
      if (ref) d.secrets.push(ref);
    }
  }
  const daemon = isObj(raw['daemon']) ? raw['daemon'] : {};
  if (typeof daemon['socket'] === 'string' && isAbsolute(daemon['socket'])) d.socket = daemon['socket'];
  const serve = isObj(raw['serve']) ? raw['serve'] : {};
  const reviewers = isObj(serve['reviewers']) ? serve['reviewers'] : {};
  for (const [at, v] of [
    ['daemon.executorToken', daemon['executorToken']],
    ['serve.executorToken', serve['executorToken']],
    ['serve.mcpToken', serve['mcpToken']],
    ...Object.entries(reviewers).map(([who, r]) => [`serve.reviewers.${who}`, r] as const),
  ] as const) {
    const ref = secretRef(v, at, abs);
    if (ref) {
      d.secrets.push(ref);
      d.tokens.push(ref);
    }
  }
  const store = raw['store'];
  // a URL or another scheme is refused by the loader, never a file; PostgreSQL's URL is a secret like the others
  if (
    typeof store === 'string' &&
    store !== '' &&
    store !== ':memory:' &&
    !/^[A-Za-z][A-Za-z0-9+.-]+:/.test(store)
  )
    d.store = abs(store);
  if (isObj(store)) {
    const ref = secretRef(store['postgres'], 'store.postgres', abs);
    if (ref) d.secrets.push(ref);
  }
  const upstream = isObj(raw['upstream']) ? raw['upstream'] : {};
  if (typeof upstream['caFile'] === 'string' && upstream['caFile'] !== '') d.caFile = abs(upstream['caFile']);
  const images = isObj(raw['images']) ? raw['images'] : {};
  for (const [name, img] of Object.entries(images)) {
    if (!isObj(img)) continue;
    const ro = Array.isArray(img['readOnlyPaths'])
      ? img['readOnlyPaths'].filter((p): p is string => typeof p === 'string' && isAbsolute(p))
      : [];
    d.images.push({
      name,
      profile: typeof img['profile'] === 'string' ? img['profile'] : 'isolated',
      readOnlyPaths: ro,
    });
  }
  return d;
}
