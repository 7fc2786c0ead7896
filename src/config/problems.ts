/**
 * Configuration problems: each refusal is a reason code from the catalogue (a CONFIG_ code),
 * the path to the offending field and what the operator can do. A message never holds a
 * secret: values of secret fields are never shown, and other values only where they are
 * the operator's own non-secret settings (a path, a hash the loader computed).
 */
import { looksLikeSecret } from '../audit/secret-shape.js';
import { brokerError, type ErrorCode } from '../errors.js';
import { formatPath, type PathSeg } from '../manifest/problems.js';
import type { ConfigProblem } from './types.js';

/** A reason code: a CONFIG_ catalogue code other than the two a whole load or call fails with. */
export type ConfigReason = Exclude<
  Extract<ErrorCode, `CONFIG_${string}`>,
  'CONFIG_INVALID' | 'CONFIG_SECRET_UNAVAILABLE'
>;

const SHOWN = 3;

/** Collects problems while the loader runs over a configuration. */
export class ConfigProblems {
  readonly items: ConfigProblem[] = [];

  add(code: ConfigReason, path: readonly PathSeg[], message: string): void {
    // a key is the operator's text too: one that looks like a secret (pasted as a field name) is not repeated
    const shown = path.map((s) =>
      typeof s === 'string' && looksLikeSecret(s) ? '(a key that looks like a secret)' : s,
    );
    this.items.push({ path: formatPath(shown), code, message });
  }

  /** The same with the path already written out (a manifest problem's path appended to its extension's). */
  addAt(code: ConfigReason, path: string, message: string): void {
    this.items.push({ path, code, message });
  }

  /**
   * Throw CONFIG_INVALID with every problem, if there is any.
   * @throws BrokerError CONFIG_INVALID with `details.problems`
   */
  throwIfAny(what: string): void {
    if (this.items.length === 0) return;
    throw brokerError(
      'CONFIG_INVALID',
      { what, problems: this.items, shown: SHOWN },
      { details: { problems: this.items } },
    );
  }
}

export { formatPath, type PathSeg };
