/**
 * The durable store's contract (docs/store.md): per-tool allow switches, approvals and
 * audit events, held transactionally. Every method returns a promise: the embedded SQLite
 * store does its work synchronously before the promise settles (calls take effect in call
 * order); the PostgreSQL store shares one database between any number of brokers.
 */
import type { AuditEvent } from '../audit/types.js';
import type { Tier } from '../policy/types.js';

export type { AuditEvent, Tier };

/** The label key an egress event's run id is read from (`SessionOptions.labels.runId`). */
export const RUN_ID_LABEL = 'runId';

/** The engine's per-request event, as `onAudit` hands it over. */
export type EgressEvent = AuditEvent;

/** One per call: how the run ended, at which tier and why that tier. */
export interface ExecutionEvent {
  type: 'extension.execution.succeeded' | 'extension.execution.failed';
  /** ISO 8601 */
  time: string;
  runId: string;
  extensionId: string;
  cliId?: string;
  cliTier: Tier;
  /** `TierResolution.reason` from the policy module */
  cliTierReason: string;
  /** sha256 (lower-case hex) of the CLI's argv as a JSON array of strings; the argv itself is not kept */
  argvDigest?: string;
  /** the tool the agent called, when the host named it */
  tool?: string;
  exitCode?: number;
  /** the signal that ended the CLI, when one did */
  signal?: string;
  /** the failure's catalogue code, for `.failed` */
  code?: string;
  /**
   * `unknown`: the call may have changed something at the vendor before it failed (a write
   * was sent, then a request was refused), so nothing should retry it on its own
   */
  outcome?: 'unknown';
  /** writes sent before the refusal whose effect nobody saw through: method, host, redacted path */
  unknownOutcomes?: readonly { method: string; host: string; path: string }[];
  /** an egress refusal the CLI outlived (a host outside egress it did not need): the call still completed */
  outlivedRefusals?: readonly { code: string; method: string; host: string; path: string }[];
  /**
   * how many of this call's other audit events the store could not take (the call failed
   * with the store's code; its later requests were refused before they were sent)
   */
  lostEvents?: number;
  /**
   * The token minted for this call's tier, when its connection mints one per call (a GitHub
   * App installation): the permissions granted, the repositories it is narrowed to and its
   * expiry. Never the token.
   */
  mintedToken?: {
    kind: 'github_app';
    tier: Tier;
    permissions: Readonly<Record<string, string>>;
    repositories?: readonly string[];
    /** ISO 8601 */
    expiresAt: string;
  };
  /** the call never reached the runner: the host refused it first (bad input, a tool not offered, help answered from the tree) */
  refusedBy?: 'host';
  durationMs?: number;
  labels?: Readonly<Record<string, string>>;
}

/** Written by `setAssignmentTier` in the same transaction as the change. */
export interface TierChangeEvent {
  type: 'extension.cli_tier.raised' | 'extension.cli_tier.lowered';
  time: string;
  extensionId: string;
  assignmentId: string;
  /** the CLI (its id within the extension) whose switch changed */
  cliId: string;
  who: string;
  previous: Tier;
  new: Tier;
}

/**
 * Written by an applied `pruneEvents` in the same transaction as the delete: who pruned, the
 * cutoff and how many events went. Dated when the prune ran, so the next prune with the
 * same cutoff keeps it.
 */
export interface PruneEvent {
  type: 'store.events.pruned';
  time: string;
  /** the person (`store prune --by`) or `retention` for the configured periodic prune */
  who: string;
  /** the cutoff, ISO 8601: events before it went, except those a retention keeps */
  before: string;
  /** how many events were deleted (this one not counted) */
  events: number;
  /**
   * How the hash chain crosses the deleted events (docs/audit.md); absent when none were
   * deleted. The events a prune keeps (runs with an open approval) leave holes in the chain,
   * each named by the chained events on either side of it.
   */
  chain?: {
    /** set when no chained event older than it is left: the oldest remaining chained event's seq */
    start?: number;
    /** `[kept seq before, seq after]` around each run of events this prune deleted */
    gaps?: [number, number][];
    /** the newest deleted event's seq */
    lastPrunedSeq: number;
    /** its hash: what the event after it names as its previous (null for an event from before the chain) */
    lastPrunedHash: string | null;
  };
}

/** An event the store keeps: an egress request, a CLI execution, a tier change, or a prune. */
export type StoreEvent = EgressEvent | ExecutionEvent | TierChangeEvent | PruneEvent;
export type StoreEventType = StoreEvent['type'];

export const STORE_EVENT_TYPES: readonly StoreEventType[] = [
  'egress.allowed',
  'egress.blocked',
  'extension.execution.succeeded',
  'extension.execution.failed',
  'extension.cli_tier.raised',
  'extension.cli_tier.lowered',
  'store.events.pruned',
];

/** An event as read back: `seq` is its position in the store, increasing with every append. */
export interface StoredEvent {
  seq: number;
  event: StoreEvent;
}

/** Filters are ANDed; absent ones do not filter. */
export interface EventQuery {
  runId?: string;
  type?: StoreEventType | readonly StoreEventType[];
  /** egress decision; other event types have none and never match */
  decision?: 'allow' | 'deny';
  extensionId?: string;
  /** inclusive lower bound on the event's time */
  since?: string | Date;
  /** exclusive upper bound on the event's time */
  until?: string | Date;
  /** 1..10 000; default 1 000 */
  limit?: number;
  /** by event time, then append order; default 'oldest' (an audit trail reads forward) */
  order?: 'oldest' | 'newest';
  /**
   * Paging: continue after the event with this seq (the last one of the previous page, read
   * with the same filters and order). A seq that names no stored event yields no page.
   */
  after?: number;
}

/** Identifies one assignment of an extension (the block the author configured). */
export interface AssignmentKey {
  extensionId: string;
  assignmentId: string;
}

/**
 * Identifies one tool's allow switch: a CLI (its id within the extension, the same whatever
 * name the tool is offered under) of one assignment.
 */
export interface CliTierKey extends AssignmentKey {
  cliId: string;
}

/** What `setAssignmentTier` takes: the tool's switch, the tier to set, and who sets it. */
export interface SetTierInput extends CliTierKey {
  tier: Tier;
  /** the person (or system) making the change; recorded in the event */
  who: string;
}

/** The tool's tier before and after `setAssignmentTier`. */
export interface SetTierResult {
  previous: Tier;
  tier: Tier;
  /** false when the tier already had that value: nothing was written, no event */
  changed: boolean;
  event?: TierChangeEvent;
}

/** What `pruneEvents` takes: the cutoff, whether to delete, and who deletes. */
export interface PruneInput {
  /** events whose time is before this go (except those kept: see `pruneEvents`) */
  before: Date | string;
  /** true: count what would go and change nothing. Anything but `false` is a dry run. */
  dryRun: boolean;
  /** who prunes, recorded in the prune's event; required unless a dry run */
  who?: string;
}

/** What `pruneEvents` did, or would do on a dry run. */
export interface PruneResult {
  /** events deleted (or, on a dry run, that would be) */
  events: number;
  /** the cutoff, ISO 8601 */
  before: string;
  dryRun: boolean;
  /** the `store.events.pruned` event written with the delete; absent on a dry run */
  event?: PruneEvent;
}

/** Where an approval is: pending, approved, rejected, or consumed by the resumed run. */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'consumed';

/**
 * What a paused run records for a reviewer. The caller redacts: `bodyPreview`,
 * `path` and `toolArgs` are stored and shown as given, so they must already be free of
 * secrets (the store cannot tell a token from text).
 */
export interface NewApproval {
  runId: string;
  /** `requestDigest()` of the refused request: 64 lower-case hex characters */
  digest: string;
  method: string;
  host: string;
  path: string;
  graphqlOperation?: string;
  /** redacted, bounded preview of the body; absent when the request had none */
  bodyPreview?: string;
  /** the tool the agent called and its arguments (JSON-serializable) */
  tool: string;
  toolArgs: unknown;
}

export interface Approval extends NewApproval {
  id: string;
  status: ApprovalStatus;
  createdAt: string;
  /** when and by whom it was approved or rejected */
  decidedAt?: string;
  decidedBy?: string;
  consumedAt?: string;
  /**
   * While a call waits for this pending approval, on whichever server holds it, the end of
   * that server's lease (ISO time, renewed while it waits; `holdApproval`). Past it, or
   * absent, no call waits: an approved approval then runs only when resumed.
   */
  heldUntil?: string;
}

/** Filters for `listApprovals`. */
export interface ApprovalQuery {
  status?: ApprovalStatus;
  runId?: string;
  /** 1..10 000; default 1 000 */
  limit?: number;
  /** by creation; default 'oldest' */
  order?: 'oldest' | 'newest';
}

/** How a conformance run of a pinned program ended: `pass`, or `refused` with the first failing check's code. */
export type ConformanceVerdictKind = 'pass' | 'refused';

/** A conformance verdict to record: which program (by its sha256) was tried, and how it went. */
export interface NewConformanceVerdict {
  /** the sha256 of the program's bytes (64 lower-case hex digits): what the verdict is about */
  sha256: string;
  /** the configuration's image name it was pinned as */
  image: string;
  /** the program's absolute path when it was tried */
  executable: string;
  verdict: ConformanceVerdictKind;
  /** the first failing check's CONFORMANCE_* code; present exactly when refused */
  code?: string;
  /** the tool id (`<extension>:cli:<id>`) it was tried as, when there was one */
  tool?: string;
}

/** A recorded conformance verdict. */
export interface ConformanceVerdict extends NewConformanceVerdict {
  /** its position among verdicts, increasing with every record */
  seq: number;
  /** when it was recorded, ISO 8601 */
  time: string;
}

/**
 * A review-page session as the store keeps it. `id` is what the server stores for the
 * session: a hash of the cookie's random id, never the id itself. Times are epoch ms.
 */
export interface ReviewSessionRecord {
  id: string;
  who: string;
  issuedAt: number;
  lastSeen: number;
}

/** The bounds a new session is issued under, applied in the same transaction as the insert. */
export interface ReviewSessionBounds {
  /** sessions issued before this (epoch ms) are ended first */
  issuedAfter: number;
  /** sessions last seen before this (epoch ms) are ended first */
  seenAfter: number;
  /** at most this many sessions of the new one's reviewer, the new one included (their oldest end) */
  perReviewer: number;
  /** at most this many sessions in all, the new one included (the oldest end) */
  overall: number;
}

/**
 * One throttle counter (serve's guessing bound), shared by every server over this store.
 * Keyed by a client address, or '*' for the count over all addresses. Times are epoch ms.
 */
export interface ThrottleCounter {
  windowStart: number;
  failures: number;
  last: number;
  lockedUntil: number;
  /** lock-outs in a row */
  strikes: number;
}

/** The durable store. Implementations must keep every guarantee in docs/store.md. */
export interface Store {
  /**
   * One tool's allow switch within its assignment; 'read' when it was never set (the switch
   * starts off, so a tool added later starts at read).
   */
  getAssignmentTier(key: CliTierKey): Promise<Tier>;
  /**
   * Change one tool's allow switch and write `extension.cli_tier.raised`/`.lowered` in one
   * transaction. If the event cannot be written the tier stays as it was and this rejects
   * with STORE_WRITE_FAILED.
   */
  setAssignmentTier(input: SetTierInput): Promise<SetTierResult>;

  /** Record a pending approval; the id is generated. */
  createApproval(input: NewApproval): Promise<Approval>;
  /** The approval with this id, or undefined. */
  getApproval(id: string): Promise<Approval | undefined>;
  /** Approvals matching the query. */
  listApprovals(query?: ApprovalQuery): Promise<Approval[]>;
  /** pending → approved; APPROVAL_NOT_FOUND / APPROVAL_NOT_PENDING otherwise. */
  approve(id: string, who: string): Promise<Approval>;
  /** pending → rejected; APPROVAL_NOT_FOUND / APPROVAL_NOT_PENDING otherwise. */
  reject(id: string, who: string): Promise<Approval>;
  /**
   * approved → consumed for the oldest approved approval of `runId` with this digest, in one
   * atomic step: of any number of concurrent calls (any connections) exactly one gets it.
   * Undefined when there is nothing approved to consume.
   */
  consumeApproved(digest: string, runId: string): Promise<Approval | undefined>;
  /**
   * A call waits for pending approval `id` until `until` (ISO time), a lease its server
   * renews while it waits; `null` ends the hold (the wait ended without a decision). No-op on
   * an approval that is not pending. STORE_INPUT_INVALID for a time that does not parse.
   */
  holdApproval(id: string, until: string | null): Promise<void>;
  /**
   * consumed → approved for approval `id`, clearing consumedAt: the request it was consumed
   * for never reached the vendor (the runner calls it when the connection failed before the
   * request was written), so the approval stays usable for the next re-run. Undefined when
   * the approval is not consumed.
   */
  releaseApproval(id: string): Promise<Approval | undefined>;

  /** Append one audit event; resolves to its seq. */
  appendEvent(event: StoreEvent): Promise<number>;
  /** Events matching the query. */
  listEvents(query?: EventQuery): Promise<StoredEvent[]>;
  /**
   * Retention: delete the audit events whose time is before `before`, except the events of a
   * run that still has an open approval (pending, or approved and not yet consumed: the run
   * may still resume). Approvals themselves are never deleted. An applied prune writes
   * `store.events.pruned` (who, cutoff, count) in the same transaction as the delete: both
   * commit or neither does. A dry run counts and changes nothing. STORE_INPUT_INVALID for a
   * cutoff that is not a time, or a missing `who` when applied.
   */
  pruneEvents(input: PruneInput): Promise<PruneResult>;
  /**
   * Record a conformance verdict (kept: a later one for the same sha256 supersedes it, the
   * history stays). STORE_INPUT_INVALID for a malformed sha256, an unknown verdict, or a code
   * missing on a refusal (or present on a pass).
   */
  recordConformance(verdict: NewConformanceVerdict): Promise<ConformanceVerdict>;
  /** The latest verdict recorded for the program with this sha256, or undefined. */
  conformanceFor(sha256: string): Promise<ConformanceVerdict | undefined>;

  /**
   * Can the store answer now? Resolves when a trivial query succeeds within `timeoutMs`
   * (default 2 000); rejects with STORE_UNAVAILABLE otherwise (STORE_CLOSED after close).
   * Never waits out the reconnect window: a health check must answer fast.
   */
  ping(timeoutMs?: number): Promise<void>;
  /**
   * Hear approvals leave pending (approved or rejected) without polling: `fn(id)` is called
   * for decisions made by any process over the same database where the backend can tell
   * (PostgreSQL: LISTEN/NOTIFY, every connected broker), and by this store object only on
   * SQLite. A notice may repeat, may name an approval nobody waits for, and can be lost while
   * a connection is down: callers re-read the approval, and still poll. Returns the unsubscribe.
   */
  watchApprovals(fn: (id: string) => void): () => void;

  /**
   * Record a review session, first ending (in the same transaction) every session past the
   * bounds: expired ones, then the reviewer's oldest beyond `perReviewer`, then the oldest
   * overall beyond `overall`.
   */
  putReviewSession(session: ReviewSessionRecord, bounds: ReviewSessionBounds): Promise<void>;
  /** The session stored under `id`, or undefined (never issued, ended, or swept). */
  getReviewSession(id: string): Promise<ReviewSessionRecord | undefined>;
  /** Count a use of the session: lastSeen = `at` (never moved backwards). No-op when it is gone. */
  touchReviewSession(id: string, at: number): Promise<void>;
  /** End the session for every server over this store; idempotent. */
  endReviewSession(id: string): Promise<void>;

  /** The throttle counters stored under `keys` (absent keys are missing from the map). */
  throttleCounters(keys: readonly string[]): Promise<Map<string, ThrottleCounter>>;
  /**
   * Read-modify-write the counters under `keys` in one transaction, serialised against every
   * other update of those keys by any process: `fn` gets the current counters (absent keys
   * missing) and returns the ones to store; the stored map is what this resolves to. `fn`
   * must be synchronous and pure (it may run again on a retried transaction). Counters whose
   * `max(last, lockedUntil)` is before `forgetBefore` are deleted in the same transaction.
   */
  updateThrottle(
    keys: readonly string[],
    fn: (current: Map<string, ThrottleCounter>) => Map<string, ThrottleCounter>,
    forgetBefore: number,
  ): Promise<Map<string, ThrottleCounter>>;

  /** Release the database; idempotent. Later calls reject with STORE_CLOSED. */
  close(): Promise<void>;
}
