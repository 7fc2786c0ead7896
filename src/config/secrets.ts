/**
 * Secret references: checked when the configuration loads (so a missing variable or an
 * open file mode refuses the load) and read again at every call (so a rotated secret takes
 * effect on the next call). Every message names the reference (the variable's name, the
 * file's path), never its value; a name that itself looks like a secret is not shown either.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { looksLikeSecret, secretKind } from '../audit/secret-shape.js';
import { brokerError } from '../errors.js';
import { tokenWeakness } from './token-strength.js';
import type { SecretRef } from './types.js';

/** A reference with its file path resolved (absolute). */
export type ResolvedSecretRef = { env: string } | { file: string };

export type Env = Record<string, string | undefined>;

/** Files above this size are not a secret someone meant to reference. */
const MAX_SECRET_BYTES = 64 * 1024;

export type SecretLookup =
  | { ok: true; value: string }
  | {
      ok: false;
      code: 'CONFIG_SECRET_MISSING' | 'CONFIG_SECRET_FILE_MODE' | 'CONFIG_SECRET_WEAK';
      why: string;
    };

/**
 * A path that may be a secret pasted in place of a path: a segment with a token's shape, or
 * a random-looking file name. A random directory name (mkdtemp's) alone is not one.
 */
function secretShapedPath(path: string): boolean {
  const segs = path.split('/').filter(Boolean);
  return (
    segs.some((s) => (secretKind(s) ?? 'high-entropy') !== 'high-entropy') ||
    looksLikeSecret(segs.at(-1) ?? '')
  );
}

/** How a reference is named in messages (and in details): never a name that looks like the secret itself. */
export function refName(ref: ResolvedSecretRef): { env: string } | { file: string } {
  if ('env' in ref) return looksLikeSecret(ref.env) ? { env: '(not shown)' } : { env: ref.env };
  return secretShapedPath(ref.file) ? { file: '(not shown)' } : { file: ref.file };
}

function describeRef(ref: ResolvedSecretRef): string {
  const n = refName(ref);
  if ('env' in n)
    return n.env === '(not shown)'
      ? 'the environment variable named here (not shown: the name looks like a secret; is the secret written in place of the name?)'
      : `environment variable ${n.env}`;
  return n.file === '(not shown)'
    ? 'the file named here (not shown: the path looks like a secret)'
    : `file ${n.file}`;
}

/** Look a secret up now. Never throws; never puts the value in `why`. */
export async function lookupSecret(ref: ResolvedSecretRef, env: Env): Promise<SecretLookup> {
  const what = describeRef(ref);
  if ('env' in ref) {
    const v = env[ref.env];
    if (v === undefined)
      return { ok: false, code: 'CONFIG_SECRET_MISSING', why: `${what} is not set for this process` };
    if (v === '') return { ok: false, code: 'CONFIG_SECRET_MISSING', why: `${what} is empty` };
    return { ok: true, value: v };
  }
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    // non-blocking: a FIFO in a secret's place must not hang the load until someone writes to it
    fh = await open(ref.file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    return {
      ok: false,
      code: 'CONFIG_SECRET_MISSING',
      why:
        code === 'ENOENT' ? `${what} does not exist` : `${what} cannot be opened by this process (${code})`,
    };
  }
  try {
    // the mode of the file opened, not of whatever the path names a moment later
    const st = await fh.stat();
    if (!st.isFile())
      return { ok: false, code: 'CONFIG_SECRET_MISSING', why: `${what} is not a regular file` };
    const loose = st.mode & 0o077;
    if (loose !== 0) {
      return {
        ok: false,
        code: 'CONFIG_SECRET_FILE_MODE',
        why: `${what} has mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}: group or other may access it; chmod 600 it (owned by the user that loads the configuration)`,
      };
    }
    if (st.size > MAX_SECRET_BYTES)
      return {
        ok: false,
        code: 'CONFIG_SECRET_MISSING',
        why: `${what} is over ${MAX_SECRET_BYTES / 1024} KiB: not a secret file`,
      };
    // one trailing line break is how editors and `echo` end a file, not part of the secret
    const value = (await fh.readFile('utf8')).replace(/[\r\n]+$/, '');
    if (value === '') return { ok: false, code: 'CONFIG_SECRET_MISSING', why: `${what} is empty` };
    return { ok: true, value };
  } catch (e) {
    return {
      ok: false,
      code: 'CONFIG_SECRET_MISSING',
      why: `${what} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  } finally {
    await fh.close();
  }
}

/**
 * Read a secret for a call.
 * @throws BrokerError CONFIG_SECRET_UNAVAILABLE naming the reference
 */
export async function readSecret(ref: ResolvedSecretRef, env: Env, field: string): Promise<string> {
  return valueOrRefuse(await lookupSecret(ref, env), ref, field);
}

/** A lookup's value, or its failure as CONFIG_SECRET_UNAVAILABLE naming the reference (never the value). */
function valueOrRefuse(r: SecretLookup, ref: ResolvedSecretRef, field: string): string {
  if (r.ok) return r.value;
  throw brokerError(
    'CONFIG_SECRET_UNAVAILABLE',
    { field, why: r.why },
    { details: { field, reference: refName(ref), reason: r.code } },
  );
}

/**
 * Look a bearer token up now (a front door's: the daemon's executor token, serve's tokens):
 * as `lookupSecret`, and CONFIG_SECRET_WEAK when it is estimated below 128 bits. Never puts
 * the value, or any part of it, in `why`.
 */
export async function lookupToken(ref: ResolvedSecretRef, env: Env): Promise<SecretLookup> {
  const r = await lookupSecret(ref, env);
  if (!r.ok) return r;
  const weak = tokenWeakness(r.value);
  if (weak === undefined) return r;
  return {
    ok: false,
    code: 'CONFIG_SECRET_WEAK',
    why: `${describeRef(ref)} holds a weak token (${weak}); generate one with openssl rand -hex 32`,
  };
}

/**
 * Read a bearer token for a request: a token rotated to a weak value is refused like one that
 * cannot be read, so the door fails closed until the operator writes a strong one.
 * @throws BrokerError CONFIG_SECRET_UNAVAILABLE naming the reference (details.reason CONFIG_SECRET_WEAK)
 */
export async function readToken(ref: ResolvedSecretRef, env: Env, field: string): Promise<string> {
  return valueOrRefuse(await lookupToken(ref, env), ref, field);
}

/** The same reference with a relative file path resolved against `resolve`. */
export function resolveRef(ref: SecretRef, resolve: (p: string) => string): ResolvedSecretRef {
  return 'env' in ref ? { env: ref.env } : { file: resolve(ref.file) };
}
