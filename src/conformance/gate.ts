/**
 * The conformance gate: a pinned program whose configuration requires a verdict is offered
 * only once the store holds a passing one for its sha256. Fail closed: no verdict, or a
 * refusal, withholds every tool that runs it; an image the operator waived is offered.
 *
 * Typed by shape, not by the configuration's types (src/config is a sibling layer): a loaded
 * configuration's `tools` fit `GatedTool`, and its withheld entries are these.
 */
import type { ConformanceVerdict, Store } from '../store/types.js';

/** What the gate reads of a tool: its names and its pinned image. */
export interface GatedTool {
  id: string;
  name: string;
  image: {
    name: string;
    sha256: string;
    /** `required`: a passing verdict is needed; `waived` or absent: offered without one */
    conformance?: 'required' | 'waived';
  };
}

/** A tool the gate withholds, in the shape of a configuration's withheld tools. */
export interface ConformanceWithheld {
  id: string;
  name: string;
  code: 'TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED' | 'TOOL_VENDOR_CLI_CONFORMANCE_FAILED';
  message: string;
}

/**
 * Split `tools` into those offered and those the conformance gate withholds: an image that
 * requires a verdict and has none in `store` is TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED; one
 * whose latest verdict is a refusal is TOOL_VENDOR_CLI_CONFORMANCE_FAILED, the refusal's code
 * in the message. The store is asked once per sha256.
 * @throws BrokerError from the store (STORE_UNAVAILABLE, STORE_CLOSED): the caller decides; it must not offer the tools then
 */
export async function conformanceWithheld<T extends GatedTool>(
  tools: readonly T[],
  store: Pick<Store, 'conformanceFor'>,
): Promise<{ offered: T[]; withheld: ConformanceWithheld[] }> {
  const verdicts = new Map<string, Promise<ConformanceVerdict | undefined>>();
  const offered: T[] = [];
  const withheld: ConformanceWithheld[] = [];
  for (const tool of tools) {
    const img = tool.image;
    if (img.conformance !== 'required') {
      offered.push(tool);
      continue;
    }
    if (!verdicts.has(img.sha256)) verdicts.set(img.sha256, store.conformanceFor(img.sha256));
    const v = await verdicts.get(img.sha256)!;
    const short = img.sha256.slice(0, 12);
    if (v === undefined)
      withheld.push({
        id: tool.id,
        name: tool.name,
        code: 'TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED',
        message: `image ${img.name} (sha256 ${short}…) has no conformance verdict in the store: run clibroker conformance --config <file>, or set its conformance to waived`,
      });
    else if (v.verdict !== 'pass')
      withheld.push({
        id: tool.id,
        name: tool.name,
        code: 'TOOL_VENDOR_CLI_CONFORMANCE_FAILED',
        message: `image ${img.name} (sha256 ${short}…) was refused by conformance at ${v.time}: ${v.code ?? 'refused'}; docs/conformance.md says what an author can do about it`,
      });
    else offered.push(tool);
  }
  return { offered, withheld };
}
