/** wirePolicy.overrides (DESIGN §4). */
import type { ClassifyInput, PolicyClassification } from './types.js';

/** Apply the overrides to a classification in place. */
export function applyOverrides(_out: PolicyClassification, _input: ClassifyInput, _path: string): void {
  // first slice: overrides land in the next commit
}
