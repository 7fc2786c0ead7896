/**
 * What every step of a configuration load shares (`load.ts` runs them in order): the input
 * as an object, the problems found so far, the paths no CLI may reach, where relative paths
 * start, and the one way a secret reference is checked at load.
 */
import { isAbsolute, resolve } from 'node:path';
import { ConfigProblems, type PathSeg } from './problems.js';
import { type Env, lookupSecret, lookupToken, type ResolvedSecretRef } from './secrets.js';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const entries = (v: unknown): [string, unknown][] => (isObj(v) ? Object.entries(v) : []);

/** Where a configuration comes from. */
export interface ConfigOrigin {
  /** the file it was read from, absolute; undefined for an object */
  file: string | undefined;
  /** the directory its relative paths resolve from */
  base: string;
  /** its name in a refusal */
  what: string;
}

/** One load in progress. Each step reads the input from `cfg`, well-formed or not, and adds what it finds to `out`. */
export interface Load {
  /** the input when it is an object, else empty (its shape problem is already in `out`) */
  cfg: Obj;
  out: ConfigProblems;
  /** files and sockets no CLI may reach: the configuration, secret files, the store, the daemon's socket */
  hidden: Set<string>;
  /** the environment secrets are read from, at load and at every call */
  env: Env;
  /** a path of the configuration, made absolute */
  abs(p: string): string;
  /**
   * A secret reference: its file hidden from the CLIs, and the secret present now (a front
   * door's token, `token`, strong enough too), unless the load reads no secrets.
   */
  checkRef(ref: ResolvedSecretRef, path: PathSeg[], token?: boolean): Promise<void>;
}

/** A load of `input` from `origin`: nothing found yet, and only the configuration file hidden. */
export function startLoad(
  input: unknown,
  origin: ConfigOrigin,
  opts: { env?: Env; readSecrets?: boolean },
): Load {
  const env: Env = opts.env ?? process.env;
  const out = new ConfigProblems();
  const hidden = new Set<string>(origin.file !== undefined ? [origin.file] : []);
  return {
    cfg: (isObj(input) ? input : {}) as Obj,
    out,
    hidden,
    env,
    abs: (p) => (isAbsolute(p) ? p : resolve(origin.base, p)),
    async checkRef(ref, path, token = false) {
      if ('file' in ref) hidden.add(ref.file);
      if (opts.readSecrets === false) return;
      const r = token ? await lookupToken(ref, env) : await lookupSecret(ref, env);
      if (!r.ok) out.add(r.code, path, `${r.why}`);
    },
  };
}
