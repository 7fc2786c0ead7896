/**
 * Conformance of a configuration's pinned programs: each image run once through the real
 * broker and sandbox against the embedded mock vendor (runConformance), with the settings
 * clibroker ships for that program (gh, curl, az), and its verdict recorded in the store by
 * the program's sha256 — what the conformance gate reads.
 *
 * Typed by shape: a loaded configuration's images and tools fit (src/config is a sibling layer).
 */
import { basename } from 'node:path';
import type { RunImage } from '../runs/types.js';
import type { ConformanceVerdict, Store } from '../store/types.js';
import { knownConformance, mockVendor } from './known.js';
import { runConformance } from './run.js';
import type { ConformanceReport } from './types.js';

/** One pinned image to try, with the tools that run it. */
export interface ImageToTry {
  name: string;
  executable: string;
  sha256: string;
  profile: RunImage['profile'];
  readOnlyPaths: readonly string[];
  /** checks the file is still the pinned one before it runs */
  verify?: () => Promise<void>;
  /** the tools that run it: `id` `<extension>:cli:<id>`, `cliId` the CLI's id */
  tools: readonly { id: string; cliId: string }[];
}

/** What became of one image: its recorded verdict and report, or why it was not tried. */
export interface ImageConformance {
  image: string;
  executable: string;
  sha256: string;
  tools: string[];
  /** the verdict recorded (absent when skipped) */
  recorded?: ConformanceVerdict;
  report?: ConformanceReport;
  /** why it was not tried: clibroker has no conformance settings for the program */
  skipped?: string;
}

/**
 * Try each image and record its verdict in `store`. The settings are those for the program's
 * file name (gh, curl, az), else for a CLI id of a tool running it; an image with neither is
 * skipped, not recorded (it can only be waived).
 * @throws BrokerError from the store when a verdict cannot be recorded
 */
export async function conformImages(
  images: readonly ImageToTry[],
  store: Pick<Store, 'recordConformance'>,
  opts: { deadlineMs?: number; hiddenPaths?: readonly string[] } = {},
): Promise<ImageConformance[]> {
  const out: ImageConformance[] = [];
  for (const img of images) {
    const base: ImageConformance = {
      image: img.name,
      executable: img.executable,
      sha256: img.sha256,
      tools: img.tools.map((t) => t.id),
    };
    const ids = [basename(img.executable), ...img.tools.map((t) => t.cliId)];
    const cli = ids.find((id) => knownConformance(id) !== undefined);
    const known = cli === undefined ? undefined : knownConformance(cli);
    if (cli === undefined || known === undefined) {
      out.push({
        ...base,
        skipped: `clibroker has conformance settings for gh, curl and az only: try ${img.executable} with clibroker conformance --cli <id> --manifest-file --probe, then waive this image`,
      });
      continue;
    }
    const entry = known.extension.clis.find((c) => c.id === cli)!;
    const report = await runConformance({
      extension: known.extension,
      cli,
      probe: known.probe,
      ...mockVendor(known.vendor),
      image: {
        // the shipped manifest's image name; the program is the pinned one
        name: entry.binary.image,
        executable: img.executable,
        profile: img.profile,
        readOnlyPaths: img.readOnlyPaths,
        ...(opts.hiddenPaths ? { hiddenPaths: opts.hiddenPaths } : {}),
        ...(img.verify ? { verify: img.verify } : {}),
      },
      ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
    });
    const recorded = await store.recordConformance({
      sha256: img.sha256,
      image: img.name,
      executable: img.executable,
      verdict: report.verdict,
      ...(report.reason ? { code: report.reason } : {}),
      ...(img.tools.length === 1 ? { tool: img.tools[0]!.id } : {}),
    });
    out.push({ ...base, recorded, report });
  }
  return out;
}
