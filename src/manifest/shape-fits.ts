/**
 * The manifest's fast path past zod: true only when a value certainly has the shape
 * schema.ts describes, written out by hand so that validating a well-formed manifest never
 * loads zod (~60 ms, more than the rest of a one-shot CLI call's validation). False means
 * "not certain": the zod schema then runs and names what is wrong, so these checks may be
 * stricter than the schema — a plain prototype only, no symbol keys, no holes, no key holding
 * `undefined` — but never looser. tests/manifest/shape-fits.test.ts checks that every value
 * accepted here, among the fixtures and thousands of mutations of them, is accepted by zod.
 */

type Obj = Record<string, unknown>;

/** A plain object whose own keys are all strings, each in `allowed`, none holding undefined. */
function plain(v: unknown, allowed?: ReadonlySet<string>): v is Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k of Reflect.ownKeys(v)) {
    if (typeof k !== 'string') return false;
    if (allowed && !allowed.has(k)) return false;
    const d = Object.getOwnPropertyDescriptor(v, k);
    if (!d || !('value' in d) || !d.enumerable || d.value === undefined) return false;
  }
  return true;
}

/** A dense array whose every element passes `each`. */
function list(v: unknown, each: (x: unknown) => boolean): boolean {
  if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype) return false;
  for (let i = 0; i < v.length; i++) if (!Object.hasOwn(v, i) || !each(v[i])) return false;
  return true;
}

const str = (v: unknown): v is string => typeof v === 'string';
const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v.length >= 1;
const ID = /^[a-z][a-z0-9_-]{0,31}$/;
const id = (v: unknown): boolean => typeof v === 'string' && ID.test(v);
const ENTRYPOINT = /^[^\0\s]+$/;
const METHOD = /^[A-Z]+$/;
const WIRE_CLASSES = new Set(['read', 'write', 'destructive']);
const AUTH_SCHEMES = new Set(['bearer', 'token', 'basic']);

/** Absent, or present and passing `check`. */
const opt = (o: Obj, k: string, check: (v: unknown) => boolean): boolean =>
  !Object.hasOwn(o, k) || check(o[k]);

const keys = (...k: string[]): ReadonlySet<string> => new Set(k);
const CLI_KEYS = keys(
  'id',
  'binary',
  'credentialEnv',
  'env',
  'endpointEnv',
  'helpTree',
  'helpCrawl',
  'toolkit',
  'authScheme',
  'credentialHosts',
  'bootstrap',
  'wirePolicy',
);
const BINARY_KEYS = keys('image', 'entrypoint');
const CREDENTIAL_HOSTS_KEYS = keys('hosts', 'scopes');
const BOOTSTRAP_KEYS = keys('tokenEndpoint', 'preamble');
const WIRE_POLICY_KEYS = keys('overrides');
const OVERRIDE_KEYS = keys('match', 'wireClass');
const MATCH_KEYS = keys('method', 'pathPattern', 'graphqlOperation');
const HELP_CRAWL_KEYS = keys('maxDepth');
const EXTENSION_KEYS = keys('id', 'egress', 'toolkits', 'clis');
const TOOLKIT_KEYS = keys('credential');

function override(v: unknown): boolean {
  if (!plain(v, OVERRIDE_KEYS) || !plain(v.match, MATCH_KEYS)) return false;
  const m = v.match;
  return (
    typeof v.wireClass === 'string' &&
    WIRE_CLASSES.has(v.wireClass) &&
    opt(m, 'method', (x) => typeof x === 'string' && METHOD.test(x)) &&
    opt(m, 'pathPattern', (x) => typeof x === 'string' && x.startsWith('/')) &&
    opt(m, 'graphqlOperation', nonEmpty)
  );
}

/** True when `cli` certainly has the CLI manifest's shape (the rules are checked apart). */
export function cliShapeFits(cli: unknown): boolean {
  if (!plain(cli, CLI_KEYS)) return false;
  const b = cli.binary;
  return (
    id(cli.id) &&
    plain(b, BINARY_KEYS) &&
    id(b.image) &&
    typeof b.entrypoint === 'string' &&
    ENTRYPOINT.test(b.entrypoint) &&
    opt(cli, 'credentialEnv', (v) => list(v, str)) &&
    opt(cli, 'env', (v) => plain(v) && Object.values(v).every(str)) &&
    opt(cli, 'endpointEnv', str) &&
    opt(cli, 'helpCrawl', (v) => {
      if (!plain(v, HELP_CRAWL_KEYS)) return false;
      const d = v.maxDepth;
      return typeof d === 'number' && Number.isInteger(d) && d >= 1 && d <= 3;
    }) &&
    opt(cli, 'toolkit', nonEmpty) &&
    opt(cli, 'authScheme', (v) => typeof v === 'string' && AUTH_SCHEMES.has(v)) &&
    opt(cli, 'credentialHosts', (v) =>
      list(
        v,
        (e) =>
          plain(e, CREDENTIAL_HOSTS_KEYS) && list(e.hosts, str) && opt(e, 'scopes', (s) => list(s, nonEmpty)),
      ),
    ) &&
    opt(
      cli,
      'bootstrap',
      (v) => plain(v, BOOTSTRAP_KEYS) && v.tokenEndpoint === 'credential.tokenUrl' && list(v.preamble, str),
    ) &&
    opt(cli, 'wirePolicy', (v) => plain(v, WIRE_POLICY_KEYS) && list(v.overrides, override))
  );
}

/** True when `input` certainly has the extension manifest's shape (each CLI is checked apart). */
export function extensionShapeFits(input: unknown): boolean {
  if (!plain(input, EXTENSION_KEYS)) return false;
  return (
    id(input.id) &&
    list(input.egress, str) &&
    opt(
      input,
      'toolkits',
      (v) =>
        plain(v) &&
        Object.entries(v).every(
          ([name, tk]) => name.length >= 1 && plain(tk, TOOLKIT_KEYS) && nonEmpty(tk.credential),
        ),
    ) &&
    list(input.clis, () => true)
  );
}
