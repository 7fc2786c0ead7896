/**
 * The sandbox's contracts: what a run is started
 * with and what it returns. docs/sandbox.md describes the profiles and the guarantees.
 */
import type { ChildEnvInput } from '../credentials/child-env.js';

/** The profiles `binary.image` can name. */
export type SandboxProfile = 'plain' | 'isolated';

export const SANDBOX_PROFILES: readonly SandboxProfile[] = ['plain', 'isolated'];

/** The budgets that the sandbox enforces. */
export const SANDBOX_LIMITS = Object.freeze({
  maxArgs: 256,
  maxArgBytes: 32 * 1024,
  maxStdinBytes: 1024 * 1024,
  maxDeadlineMs: 270_000,
  /** stdout and stderr together */
  maxOutputBytes: 2 * 1024 * 1024,
});

export interface SandboxOptions {
  /** the program run: an absolute path, or a bare name looked up on the child's PATH */
  entrypoint: string;
  /** passed to the program as is: never through a shell */
  args: readonly string[];
  /** the child's stdin; absent → the child reads EOF at once */
  stdin?: Buffer;
  /** the profile `binary.image` names; 'plain' by default */
  image?: string;
  /**
   * Arguments for a run of the same entrypoint before `args` (the bootstrap preamble,
   * already substituted): same HOME, TMPDIR and environment; its output is never returned.
   */
  preamble?: readonly string[];
  /** the whole call, preamble included: ≤ 270 s, 270 s by default */
  deadlineMs?: number;
  /** the broker session the child's traffic goes through */
  session: { readonly proxyUrl: string; readonly caCertPem: string };
  /**
   * Input to credentials/child-env's buildChildEnv, less what the sandbox owns per call
   * (HOME, TMPDIR, the CA file and the proxy URL).
   */
  childEnv: Omit<ChildEnvInput, 'proxyUrl' | 'caFile' | 'home' | 'tmpdir'>;
  /**
   * isolated profile: extra host paths visible read-only inside (a CLI installed under /opt, an
   * /etc entry beyond the allowlist, …); everything else outside the system directories is absent
   */
  readOnlyPaths?: readonly string[];
  /**
   * Isolated profile: host paths the child must not see even where a bind would show them
   * (the caller's configuration, secret files, its store, its sockets). A directory is
   * covered by an empty tmpfs, anything else by /dev/null; a missing path is skipped; a
   * symlink is masked at its target. The plain profile cannot enforce them: the result's
   * `hiddenPathsEnforced` says whether they were. docs/sandbox.md has the rules.
   */
  hiddenPaths?: readonly string[];
  /**
   * Never fall back: when `isolated` is asked for and bubblewrap cannot run here, throw
   * TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE instead of running `plain`. (An isolated request
   * with `hiddenPaths` never falls back either.)
   */
  strictProfile?: boolean;
  /** aborted: the call's process group is killed at once (the caller cancelled it); the result says SIGKILL */
  signal?: AbortSignal;
  /** @internal the bubblewrap binary; tests point it at one that does not work */
  bwrap?: string;
  /**
   * @internal the perl the isolated profile's fast launcher runs with; tests point it at a
   * path that does not exist to run the node launcher (both are equally strict)
   */
  perl?: string;
}

/** How one process ended. */
export interface ExitStatus {
  /** null when it was ended by a signal */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

export interface SandboxResult extends ExitStatus {
  /** UTF-8 text; cut when stdout + stderr passed 2 MiB */
  stdout: string;
  stderr: string;
  /** output was cut at the cap (the child kept running and was drained) */
  truncated: boolean;
  /** the deadline passed and the process group was killed */
  timedOut: boolean;
  /** from the first spawn (preamble or command) to the end of the command */
  durationMs: number;
  /** the profile that actually ran */
  profile: SandboxProfile;
  /** why `isolated` was asked for and `plain` ran (bwrap missing or not working here) */
  profileFallback?: string;
  /**
   * whether `hiddenPaths` were masked: true exactly when the isolated profile ran. False
   * means the child could read every file this process can (the plain profile).
   */
  hiddenPathsEnforced: boolean;
  /** the preamble's exit, when there was one (its output is never kept) */
  preamble?: ExitStatus & { durationMs: number };
}
