/**
 * Whether the tests that need the isolated profile can run here. bubblewrap may be missing, or
 * installed but refused (a container without user namespaces, the usual case): either way,
 * under CI (any non-empty $CI; .ci/run installs bubblewrap) that fails the test file, never a
 * skip; elsewhere the cases are skipped, with `# SKIPPING …: <reason>` printed and the skip
 * recorded in the TAP output. Nothing here drops a case without saying so.
 *
 * tap is imported only when a skip is recorded: the sandbox fixtures that import the sandbox
 * helpers run as plain node processes whose stdout is JSON, not TAP.
 */
import { isolationUnavailable } from '../../src/sandbox/isolated.js';

const said = new Set<string>();

/**
 * A capability a test needs is missing: under CI this throws (the file fails); elsewhere it is
 * printed once per file and the reason returned, for tap's `skip` option.
 * @param what the cases that cannot run ("the isolated-sandbox tests")
 * @param why why not (bwrap's own error text, for bwrap)
 */
export function missing(what: string, why: string): string {
  if (process.env['CI']) throw new Error(`CI needs ${what}, which cannot run here: ${why}`);
  if (!said.has(what)) {
    said.add(what);
    console.log(`# SKIPPING ${what}: ${why}`);
  }
  return `${what} cannot run here: ${why}`;
}

/**
 * tap's `skip` option for a test that needs the isolated profile: false where bwrap works.
 * Throws under CI when it does not (missing or refused).
 */
export async function isolatedSkip(): Promise<false | string> {
  const why = await isolationUnavailable();
  return why === undefined ? false : missing('the isolated-sandbox tests', why);
}

/**
 * For a table of cases: whether its isolated rows can run. When not, under CI this throws;
 * elsewhere it prints why and records one skipped test named after `what` with the reason,
 * so the rows left out of the table show in the counts.
 */
export async function recordSkipUnless(what: string, why: string | undefined): Promise<boolean> {
  if (why === undefined) return true;
  const reason = missing(what, why);
  const { default: tap } = await import('tap');
  tap.test(what, { skip: reason }, () => undefined);
  return false;
}

/** recordSkipUnless for the isolated profile: true where bwrap works. */
export async function isolationRuns(what = 'the isolated-profile cases'): Promise<boolean> {
  return recordSkipUnless(what, await isolationUnavailable());
}
