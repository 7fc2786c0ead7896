/**
 * A governed run of a vendor CLI: what the host passes in and what comes
 * back. docs/runs.md documents both.
 */
import type { Connection, ConnectionKind } from '../credentials/types.js';
import type { ExtensionManifest } from '../manifest/types.js';
import type { ApprovalContext, Tier, TierSource } from '../policy/index.js';
import type { SandboxProfile } from '../sandbox/types.js';
import type { Approval } from '../store/types.js';

/** One governed run: the extension and CLI, the agent's argv, the connection, the tier inputs and the context. */
export interface RunInput {
  /** a validated manifest (`defineExtension`) */
  extension: ExtensionManifest;
  /** the CLI id within the extension */
  cli: string;
  /** the vendor CLI's argv, passed to it as is (never through a shell) */
  args: readonly string[];
  stdin?: Buffer | string;
  /**
   * the credential the host platform hands in, or where to read it when the call needs it
   * (`ConnectionSource`); never enters the child
   */
  connection: Connection | ConnectionSource;
  /** the organization's configured endpoint (GHE host), if any */
  endpoint?: string;
  /** resolved once per call into cliTier + cliTierReason */
  tier: {
    requested?: Tier;
    /** who chose `requested` (never the agent); a tier denial names it. `caller` when absent */
    requestedBy?: TierSource;
    organizationCeiling: Tier;
    assignmentAllow: Tier;
    identity: 'assigned' | 'linked';
  };
  context: {
    /** where the call runs: only an agent step with a person can approve */
    kind: ApprovalContext;
    /** the tool the agent called (shown to the approver) */
    tool?: string;
    /** the agent's tool arguments as given; cliTier / approvedRequestDigests in them → INVALID_TOOL_INPUT */
    toolArgs?: Record<string, unknown>;
  };
  /** set by the host's approval flow (`resume`), never by the agent */
  approvedRequestDigests?: readonly string[];
  /** defaults to a new UUID; a resumed run keeps its id */
  runId?: string;
  /** ≤ 270 s */
  deadlineMs?: number;
  /** the host's, never the agent's: aborted, the CLI's process group is killed at once (the call was cancelled) */
  signal?: AbortSignal;
  /**
   * The pinned image the host's configuration names for this CLI's `binary.image`. When set,
   * the runner runs `executable` (not `binary.entrypoint`) with `profile`, never falls back
   * from isolated to plain, and calls `verify` before anything is spawned. Absent: the
   * manifest's `binary.image` names the profile and `binary.entrypoint` the program.
   */
  image?: RunImage;
}

/**
 * A connection whose secrets the runner reads when the call starts, so a secret that cannot
 * be read is a call refused before anything runs, recorded by the runner's one execution
 * event like any other, and the error reaches the caller unchanged.
 */
export interface ConnectionSource {
  /** the connection's kind, known without its secrets: the call's tier is resolved from it first */
  kind: ConnectionKind;
  /** reads the connection with its secrets (a rotated secret takes effect on the next call) */
  read(): Promise<Connection>;
}

/** A pinned CLI image as the runner needs it (the configuration's PinnedImage fits). */
export interface RunImage {
  /** the image's name: must equal the CLI's `binary.image` */
  name: string;
  /** absolute path of the program run */
  executable: string;
  profile: SandboxProfile;
  /** isolated: extra host paths bound read-only */
  readOnlyPaths?: readonly string[];
  /** isolated: host paths masked inside the sandbox (the host's configuration, secrets, store, sockets) */
  hiddenPaths?: readonly string[];
  /** checks the executable is still the pinned one; a throw refuses the call before anything runs */
  verify?: () => Promise<void>;
}

/** A request as the result names it (path redacted). */
export interface SentRequest {
  method: string;
  host: string;
  path: string;
}

/** The request clibroker refused, as the result reports it. */
export interface RefusedRequest {
  code: string;
  policyCode?: string;
  message: string;
  method: string;
  host: string;
  path: string;
  /**
   * Set when this entry stands for many: the broker folded this many refusals of `code` into
   * one summary event (the first of them is named here), past its per-call bound.
   */
  folded?: number;
}

/** What every run result carries, whatever its status. */
export interface RunBase {
  runId: string;
  cliTier: Tier;
  cliTierReason: string;
  /** the sandbox profile that ran */
  profile: SandboxProfile;
  /** requests the child sent through the broker (forwarded or refused) */
  requests: number;
  /**
   * every request clibroker refused during the run, in order (also when the CLI still
   * succeeded); refusals folded past the per-call bound come last, one entry per code
   */
  refusals: RefusedRequest[];
  /**
   * Writes this command had already sent when a destructive request was refused with
   * CLI_CONFIRMATION_AFTER_WRITE: the command stopped midway, so their outcome is unknown.
   */
  unknownOutcomes: SentRequest[];
  /**
   * What the call did at the vendor is unknown, so nothing should retry it on its own: writes
   * of unknown outcome, a tier denial (the CLI was stopped part-way), or a call that failed
   * after it had sent a write. False for completed and paused runs without unknown writes.
   */
  outcomeUnknown: boolean;
  durationMs: number;
}

/** What the CLI printed and how it ended, on results where it ran. */
export interface ChildOutput {
  /** null when the child was ended by a signal */
  exitCode: number | null;
  /** the signal that ended the child (SIGKILL at the deadline too), null when it exited */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout + stderr were cut at 2 MiB */
  truncated: boolean;
}

/** How the run ended; docs/runs.md gives the precedence between them. */
export type RunResult =
  /** the CLI exited and nothing refused decides otherwise: a non-zero exit is data */
  | (RunBase & ChildOutput & { status: 'completed' })
  /**
   * a policy refusal, whatever the CLI's exit code (curl exits 0 on a 422); or the CLI failed
   * after another refusal (the vendor unreachable, a host outside egress)
   */
  | (RunBase & ChildOutput & { status: 'refused'; refusal: RefusedRequest })
  /** a destructive request needs a person: the run paused with a pending approval */
  | (RunBase & ChildOutput & { status: 'paused'; approval: Approval })
  /** the CLI was killed at the deadline */
  | (RunBase & ChildOutput & { status: 'timed_out'; code: 'CLI_TIMEOUT' })
  /** the CLI was ended by a signal it did not get from the deadline (killed, crashed) */
  | (RunBase & ChildOutput & { status: 'failed'; code: 'CLI_EXITED_BY_SIGNAL' });
