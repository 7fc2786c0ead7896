/**
 * Conformance: whether a CLI can be governed at all. docs/conformance.md describes the
 * checks, their order and what an extension author can do about each refusal.
 */
import type { Connection } from '../credentials/types.js';
import type { ErrorCode } from '../errors.js';
import type { ExtensionManifest } from '../manifest/types.js';
import type { VendorHandler } from '../mockvendor/server.js';
import type { RunImage } from '../runs/types.js';

/** The commands a conformance run tries, as the extension author declares them. */
export interface ConformanceProbe {
  /** a command that only reads: run at tier read, every request it sends must be classified read */
  read: readonly string[];
  /** a command that writes: run at tier write, at least one request must be classified write and none destructive */
  write?: readonly string[];
  /** stdin for both commands; absent, the CLI reads EOF at once */
  stdin?: string;
}

/** What `runConformance` takes: the extension, the CLI, its probe, and the vendor to try it against. */
export interface ConformanceOptions {
  /** a validated manifest (`defineExtension`) declaring the CLI */
  extension: ExtensionManifest;
  /** the CLI id within the extension */
  cli: string;
  /** the credential the embedded vendor accepts (handed to the broker, never to the CLI) */
  connection: Connection;
  /** the embedded mock vendor's handler (githubVendor, azureVendor, or one of the author's) */
  vendor: VendorHandler;
  probe: ConformanceProbe;
  /** the pinned image to run instead of `binary.entrypoint` */
  image?: RunImage;
  /** the organization's endpoint (GHE host), if the CLI uses one */
  endpoint?: string;
  /** per command, ms (60 s by default): a CLI still running then is taken to wait for a person */
  deadlineMs?: number;
}

/** Every refusal code a check can give (CONFORMANCE_PROBE_FAILED and CONFORMANCE_CREDENTIAL_NOT_FROM_ENV serve two checks each). */
export const CONFORMANCE_CODES = [
  'CONFORMANCE_INTERACTIVE',
  'CONFORMANCE_PROXY_IGNORED',
  'CONFORMANCE_CA_NOT_TRUSTED',
  'CONFORMANCE_HTTP2_ONLY',
  'CONFORMANCE_PLAIN_HTTP',
  'CONFORMANCE_NON_443',
  'CONFORMANCE_WEBSOCKET',
  'CONFORMANCE_REQUEST_SIGNING',
  'CONFORMANCE_CREDENTIAL_NOT_FROM_ENV',
  'CONFORMANCE_CLASSIFICATION',
  'CONFORMANCE_PROBE_FAILED',
] as const satisfies readonly ErrorCode[];
/** A code a conformance check can fail with. */
export type ConformanceCode = (typeof CONFORMANCE_CODES)[number];

/** One check of a conformance run and how it went. */
export interface ConformanceCheck {
  /** stable check name (docs/conformance.md lists them) */
  name: string;
  /** the code this check refuses with */
  code: ConformanceCode;
  ok: boolean;
  /** set when an earlier failure left nothing for this check to read (ok is then false) */
  notReached?: true;
  /** what was observed, in one line; never a secret */
  evidence: string;
}

/** A conformance run: every check, and whether the CLI can be governed. */
export interface ConformanceReport {
  cli: string;
  verdict: 'pass' | 'refused';
  /** the first failing check's code (only when refused) */
  reason?: ConformanceCode;
  /** every check, in order; the first with ok false decided the verdict */
  checks: ConformanceCheck[];
}
