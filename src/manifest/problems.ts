/**
 * Manifest problems: each refusal is a reason code from the catalogue (side 'manifest'),
 * the path to the offending field, the offending value (truncated, secrets masked) and
 * what is expected. Validation collects them all, then throws one MANIFEST_INVALID.
 */
import { secretKind } from '../audit/secret-shape.js';
import { brokerError, type ErrorCode } from '../errors.js';

/** A reason code: a catalogue code whose name starts with MANIFEST_ (except MANIFEST_INVALID). */
export type ManifestReason = Extract<ErrorCode, `MANIFEST_${string}`>;

/** One refusal found in a manifest. */
export interface ManifestProblem {
  code: ManifestReason;
  /** e.g. `clis[0].credentialHosts[1].hosts[0]` */
  path: string;
  /** the offending value, truncated and with secrets masked; absent when there is none */
  value?: string;
  expected: string;
}

export type PathSeg = string | number;

const IDENT_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Render a path as `a.b[0]["odd key"]`. */
export function formatPath(segs: readonly PathSeg[]): string {
  let out = '';
  for (const s of segs) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (IDENT_RE.test(s)) out += out === '' ? s : `.${s}`;
    else out += `[${JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s)}]`;
  }
  return out || '(root)';
}

const MAX_SHOWN = 80;

/**
 * A value as it may appear in an error: a secret-shaped string becomes a description of it
 * (never any of its characters), anything longer than 80 characters is cut.
 */
export function displayValue(v: unknown): string {
  if (typeof v === 'string') {
    const kind = secretKind(v);
    if (kind) return `<masked ${kind}, ${v.length} chars>`;
    return v.length > MAX_SHOWN ? `${v.slice(0, MAX_SHOWN)}… (${v.length} chars)` : v;
  }
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = Object.prototype.toString.call(v);
  }
  if (secretKind(s)) return `<masked ${typeof v}>`;
  return s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}… (${s.length} chars)` : s;
}

/** Collects problems while rules run over a manifest. */
export class ProblemList {
  readonly items: ManifestProblem[] = [];

  add(code: ManifestReason, path: readonly PathSeg[], expected: string, value?: unknown): void {
    const p: ManifestProblem = { code, path: formatPath(path), expected };
    if (value !== undefined) p.value = displayValue(value);
    this.items.push(p);
  }

  /** Throw MANIFEST_INVALID with every problem, if there is any. */
  throwIfAny(what: string): void {
    if (this.items.length === 0) return;
    throw brokerError(
      'MANIFEST_INVALID',
      { what, problems: this.items },
      { details: { problems: this.items } },
    );
  }
}

/** Type guards the rules use so they run on any input, well-shaped or not. */
export const is = {
  obj: (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v),
  arr: (v: unknown): v is unknown[] => Array.isArray(v),
  str: (v: unknown): v is string => typeof v === 'string',
};
