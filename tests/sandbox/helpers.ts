/** Fixture factories for the sandbox tests: base options, and /proc scans for leftovers. */
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isolatedLauncher, PERL } from '../../src/sandbox/isolated.js';
import type { LauncherKind } from '../../src/sandbox/launcher.js';
import { isolationRuns, recordSkipUnless } from '../helpers/bwrap.js';
import { testPki } from '../helpers/pki.js';
import type { SandboxOptions, SandboxProfile } from '../../src/sandbox/types.js';

/** A session that no broker answers: enough for runs that make no request. */
export const FAKE_SESSION = {
  proxyUrl: 'http://s-test:pw@127.0.0.1:45999',
  caCertPem: testPki('sandbox test CA').caPem,
};

/** Options for `entrypoint args` with an env built from an empty manifest. */
export function opts(
  entrypoint: string,
  args: readonly string[],
  more: Partial<SandboxOptions> = {},
): SandboxOptions {
  return { entrypoint, args, session: FAKE_SESSION, childEnv: { cli: {} }, deadlineMs: 20_000, ...more };
}

/** `sh -c script` with $1.. set to `rest`. */
export function sh(
  script: string,
  rest: readonly string[] = [],
  more: Partial<SandboxOptions> = {},
): SandboxOptions {
  return opts('sh', ['-c', script, 'sh', ...rest], more);
}

let profileList: Promise<SandboxProfile[]> | undefined;

/**
 * The profiles to table-test: plain, and isolated where bwrap works here. Where it does not
 * (missing, or installed but refused), the file fails under CI; elsewhere the isolated rows
 * are recorded as one skipped test with bwrap's reason (../helpers/bwrap.ts).
 */
export function profiles(): Promise<SandboxProfile[]> {
  profileList ??= isolationRuns('the isolated-profile rows of this table').then((runs) =>
    runs ? ['plain', 'isolated'] : ['plain'],
  );
  return profileList;
}

/** A perl path that does not exist: the probe then picks the node launcher. */
export const NO_PERL = '/nonexistent/clibroker-perl';

/** One way to run a CLI: a profile, and for `isolated` the launcher it starts the CLI with. */
export interface Variant {
  name: string;
  profile: SandboxProfile;
  launcher?: LauncherKind;
  /** the options that select it */
  more: Partial<SandboxOptions>;
}

let variantList: Promise<Variant[]> | undefined;

/**
 * plain, then isolated with each launcher: perl (the probe's first choice) and node (chosen by
 * pointing the probe at a perl that does not exist, as on a host without one). A launcher that
 * does not run here (bwrap missing or refused, no perl) fails the file under CI; elsewhere its
 * rows are recorded as a skipped test with the reason (../helpers/bwrap.ts).
 */
export function variants(): Promise<Variant[]> {
  variantList ??= (async () => {
    const out: Variant[] = [{ name: 'plain', profile: 'plain', more: { image: 'plain' } }];
    if (!(await isolationRuns('the isolated rows of this table (perl and node launchers)'))) return out;
    const perl = await isolatedLauncher();
    if (
      await recordSkipUnless(
        'the isolated (perl) rows of this table',
        perl.launcher?.kind === 'perl'
          ? undefined
          : `${PERL} does not run under bwrap here: ${perl.unavailable ?? `the probe picked ${perl.launcher?.kind}`}`,
      )
    )
      out.push({
        name: 'isolated (perl)',
        profile: 'isolated',
        launcher: 'perl',
        more: { image: 'isolated' },
      });
    const node = await isolatedLauncher(undefined, NO_PERL);
    if (
      await recordSkipUnless(
        'the isolated (node) rows of this table',
        node.launcher?.kind === 'node'
          ? undefined
          : `node does not run under bwrap here: ${node.unavailable ?? 'the probe picked another launcher'}`,
      )
    )
      out.push({
        name: 'isolated (node)',
        profile: 'isolated',
        launcher: 'node',
        more: { image: 'isolated', perl: NO_PERL },
      });
    return out;
  })();
  return variantList;
}

/** A `sleep` duration no other process on the machine uses, to find it in /proc afterwards. */
export function uniqueSleep(): string {
  return `${9000 + randomInt(999)}.${randomInt(1_000_000)}`;
}

/** Pids of live processes whose argv contains `arg` exactly. */
export function processesWithArg(arg: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0');
      const state = readFileSync(`/proc/${name}/stat`, 'latin1').split(') ')[1]?.[0];
      if (state !== 'Z' && argv.includes(arg)) out.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/**
 * processesWithArg, after giving SIGKILLed processes up to `ms` to be reaped: a SIGKILL is
 * final once sent (the process never runs user code again), but on a busy machine it may not
 * have left the process table by the time the call returns.
 */
export async function survivorsWithArg(arg: string, ms = 2000): Promise<number[]> {
  const until = Date.now() + ms;
  for (;;) {
    const left = processesWithArg(arg);
    if (left.length === 0 || Date.now() >= until) return left;
    await new Promise((r) => setTimeout(r, 20));
  }
}

export { existsSync };
