/**
 * The checks, in their fixed order. Each reads one probe run's record (audit events, tunnel
 * events, the vendor's log, the sandbox result) and says ok or not with one line of
 * evidence. The order puts first what makes every later observation meaningless: a CLI that
 * never starts, waits for a person, or never talks to the proxy shows nothing else.
 */
import { redactLogText } from '../audit/logger.js';
import type { AuditEvent } from '../audit/types.js';
import type { TunnelEvent } from '../broker/types.js';
import type { VendorRequest } from '../mockvendor/server.js';
import type { RunResult } from '../runs/types.js';
import type { ConformanceCheck, ConformanceCode } from './types.js';

/** One command of the conformance run and everything recorded about it. */
export interface ProbeRun {
  kind: 'read' | 'write';
  args: readonly string[];
  deadlineMs: number;
  result?: RunResult;
  /** the runner refused before the CLI started (code and message, redacted) */
  thrown?: string;
  audits: AuditEvent[];
  tunnels: TunnelEvent[];
  vendorLog: VendorRequest[];
}

interface Context {
  egress: readonly string[];
}

type Verdict = { ok: boolean; evidence: string };
type CheckFn = (runs: readonly ProbeRun[], ctx: Context) => Verdict;

/** What every placeholder clibroker hands the child starts with. */
const PLACEHOLDER = 'clibroker-placeholder';

/** Output of a CLI that stopped because it found no stored sign-in. */
const NO_STORED_CREDENTIAL = /\b(credentials?|not logged in|log ?in|sign ?in|authenticat\w*|auth login)\b/i;

const OK_PASS = (evidence: string): Verdict => ({ ok: true, evidence });
const FAIL = (evidence: string): Verdict => ({ ok: false, evidence });

function codeOf(e: AuditEvent): string | undefined {
  return e.policyCode ?? e.code;
}

/** `text` cut to one short, redacted line: evidence never carries a secret or a screenful. */
function excerpt(text: string, max = 160): string {
  const line = redactLogText(text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function label(r: ProbeRun): string {
  return `${r.kind} command`;
}

/** Any CONNECT or request of this run reached the broker. */
function reachedBroker(r: ProbeRun): boolean {
  return r.audits.length > 0 || r.tunnels.length > 0;
}

function started(runs: readonly ProbeRun[]): ProbeRun[] {
  return runs.filter((r) => r.result !== undefined);
}

/** A check reading one engine refusal code back from the audit events. */
function refusedWith(code: string, what: string): CheckFn {
  return (runs) => {
    for (const r of runs) {
      const e = r.audits.find((a) => codeOf(a) === code);
      if (e)
        return FAIL(
          `${label(r)}: ${e.method} ${e.host}${e.path} was refused with ${code}: ${excerpt(e.reason)}`,
        );
    }
    return OK_PASS(
      `no ${what} (no ${code} in ${runs.reduce((n, r) => n + r.audits.length, 0)} audited requests)`,
    );
  };
}

const starts: CheckFn = (runs) => {
  const r = runs.find((x) => x.thrown !== undefined);
  return r
    ? FAIL(`${label(r)} did not start: ${r.thrown}`)
    : OK_PASS(`${runs.length} command(s) started in the ${runs[0]?.result?.profile ?? 'plain'} profile`);
};

const nonInteractive: CheckFn = (runs) => {
  const r = started(runs).find((x) => x.result!.status === 'timed_out');
  if (r)
    return FAIL(
      `${label(r)} was still running after ${r.deadlineMs} ms with stdin closed and no TTY (it waits for a person); it was killed`,
    );
  return OK_PASS(
    started(runs)
      .map((x) => `${label(x)} ended in ${x.result!.durationMs} ms`)
      .join('; ') || 'nothing ran',
  );
};

const credentialSource: CheckFn = (runs) => {
  for (const r of started(runs)) {
    const res = r.result!;
    const out = `${res.stderr}\n${res.stdout}`;
    if (!reachedBroker(r) && res.exitCode !== 0 && NO_STORED_CREDENTIAL.test(out)) {
      return FAIL(
        `${label(r)} exited ${res.exitCode ?? res.signal} before any request, asking for a stored sign-in: ${excerpt(out)}`,
      );
    }
  }
  return OK_PASS('no command stopped for a missing stored sign-in');
};

const proxy: CheckFn = (runs) => {
  const r = started(runs).find((x) => !reachedBroker(x));
  if (r) {
    const res = r.result!;
    return FAIL(
      `${label(r)} exited ${res.exitCode ?? res.signal} and not one CONNECT reached the broker (HTTPS_PROXY was not used)${res.stderr ? `: ${excerpt(res.stderr)}` : ''}`,
    );
  }
  return OK_PASS(
    started(runs)
      .map((x) => `${label(x)}: ${x.tunnels.length} tunnel(s), ${x.audits.length} request(s)`)
      .join('; '),
  );
};

/** A TLS failure the HTTP/2-only refusal already explains. */
const ALPN_FAILURE = /no.application.protocol|alpn/i;

const sessionCa: CheckFn = (runs) => {
  for (const r of runs) {
    const h2 = new Set(r.audits.filter((a) => codeOf(a) === 'CLI_HTTP2_ONLY').map((a) => a.host));
    const carried = new Set(r.tunnels.filter((t) => t.requests > 0).map((t) => t.host));
    for (const t of r.tunnels) {
      if (t.tls === 'failed' && !h2.has(t.host) && !ALPN_FAILURE.test(t.error ?? '')) {
        return FAIL(
          `${label(r)}: the TLS handshake for ${t.host} failed: ${t.error ? excerpt(t.error) : 'the client closed the connection mid-handshake (it checked the leaf against trust of its own)'}`,
        );
      }
      if (t.tls === 'established' && t.requests === 0 && !carried.has(t.host)) {
        return FAIL(
          `${label(r)}: the TLS handshake for ${t.host} finished but the client closed the tunnel without a request (it checked the leaf against trust of its own)`,
        );
      }
    }
  }
  const n = runs.reduce((k, r) => k + r.tunnels.filter((t) => t.tls === 'established').length, 0);
  return OK_PASS(`${n} tunnel(s) completed TLS with the session CA's leaves and carried requests`);
};

const platformCredential: CheckFn = (runs, ctx) => {
  const egress = new Set(ctx.egress);
  let stamped = 0;
  for (const r of runs) {
    const cert = r.audits.find((a) => codeOf(a) === 'CLI_CLIENT_CERT_UNSUPPORTED');
    if (cert) return FAIL(`${label(r)}: ${cert.host} needs a client certificate, which cannot be brokered`);
    for (const v of r.vendorLog) {
      const where = placeholderIn(v);
      if (where)
        return FAIL(
          `${label(r)}: a clibroker placeholder reached the vendor in ${where} of ${v.method} ${v.host}${v.path}`,
        );
      if (!egress.has(v.host)) continue;
      if (!v.headers.authorization)
        return FAIL(`${label(r)}: ${v.method} ${v.host}${v.path} reached the vendor with no credential`);
      stamped++;
    }
    const rejected = r.audits.find((a) => a.status === 401 && egress.has(a.host));
    if (rejected)
      return FAIL(
        `${label(r)}: the vendor answered 401 to ${rejected.method} ${rejected.host}${rejected.path}: the platform's credential did not get through`,
      );
  }
  return OK_PASS(
    `${stamped} request(s) reached the vendor with the platform's credential; no placeholder did`,
  );
};

function placeholderIn(v: VendorRequest): string | undefined {
  for (const [k, val] of Object.entries(v.headers)) {
    if (String(val).includes(PLACEHOLDER)) return `header ${k}`;
  }
  if (v.query.toString().includes(PLACEHOLDER)) return 'the query';
  if (v.body.includes(PLACEHOLDER)) return 'the body';
  return undefined;
}

const classification: CheckFn = (runs, ctx) => {
  const egress = new Set(ctx.egress);
  const parts: string[] = [];
  for (const r of started(runs)) {
    const mine = r.audits.filter((a) => egress.has(a.host) && a.method !== 'CONNECT');
    const classes = mine.map((a) => `${a.method} ${a.path} ${a.class}`);
    if (mine.length === 0)
      return FAIL(`${label(r)} sent no request to ${[...egress].join(', ')}, so it cannot be classified`);
    if (r.kind === 'read') {
      const bad = mine.find((a) => a.class !== 'read');
      if (bad)
        return FAIL(
          `read command: ${bad.method} ${bad.host}${bad.path} is classified ${bad.class}, not read`,
        );
    } else {
      const destructive = mine.find((a) => a.class === 'destructive');
      if (destructive)
        return FAIL(
          `write command: ${destructive.method} ${destructive.host}${destructive.path} is classified destructive (it needs an approval), not write`,
        );
      if (!mine.some((a) => a.class === 'write'))
        return FAIL(`write command: none of its requests is classified write (${classes.join(', ')})`);
    }
    parts.push(`${label(r)}: ${classes.slice(0, 4).join(', ')}${classes.length > 4 ? ', …' : ''}`);
  }
  return OK_PASS(parts.join('; '));
};

const completes: CheckFn = (runs) => {
  for (const r of started(runs)) {
    const res = r.result!;
    if (res.status !== 'completed' || res.exitCode !== 0) {
      const why =
        res.status === 'refused'
          ? ` (${res.refusal.policyCode ?? res.refusal.code} on ${res.refusal.method} ${res.refusal.host}${res.refusal.path})`
          : '';
      return FAIL(
        `${label(r)} ended ${res.status}${why}, exit ${res.exitCode ?? res.signal}${res.stderr ? `: ${excerpt(res.stderr)}` : ''}`,
      );
    }
  }
  return OK_PASS(
    started(runs)
      .map((x) => `${label(x)} completed, exit 0`)
      .join('; '),
  );
};

/** The checks in their fixed order: name, the code it refuses with, the check. */
export const CHECKS: readonly { name: string; code: ConformanceCode; check: CheckFn }[] = [
  { name: 'starts', code: 'CONFORMANCE_PROBE_FAILED', check: starts },
  { name: 'non-interactive', code: 'CONFORMANCE_INTERACTIVE', check: nonInteractive },
  { name: 'credential-source', code: 'CONFORMANCE_CREDENTIAL_NOT_FROM_ENV', check: credentialSource },
  { name: 'uses-proxy', code: 'CONFORMANCE_PROXY_IGNORED', check: proxy },
  { name: 'trusts-session-ca', code: 'CONFORMANCE_CA_NOT_TRUSTED', check: sessionCa },
  {
    name: 'http1.1',
    code: 'CONFORMANCE_HTTP2_ONLY',
    check: refusedWith('CLI_HTTP2_ONLY', 'HTTP/2-only handshake'),
  },
  {
    name: 'https-only',
    code: 'CONFORMANCE_PLAIN_HTTP',
    check: refusedWith('CLI_PLAIN_HTTP_REFUSED', 'plain-HTTP request'),
  },
  {
    name: 'port-443',
    code: 'CONFORMANCE_NON_443',
    check: refusedWith('CLI_PORT_REFUSED', 'CONNECT to a port other than 443'),
  },
  {
    name: 'no-websocket',
    code: 'CONFORMANCE_WEBSOCKET',
    check: refusedWith('CLI_UPGRADE_REFUSED', 'connection upgrade'),
  },
  {
    name: 'no-request-signing',
    code: 'CONFORMANCE_REQUEST_SIGNING',
    check: refusedWith('CLI_REQUEST_SIGNING_UNSUPPORTED', 'client-signed request'),
  },
  { name: 'platform-credential', code: 'CONFORMANCE_CREDENTIAL_NOT_FROM_ENV', check: platformCredential },
  { name: 'classification', code: 'CONFORMANCE_CLASSIFICATION', check: classification },
  { name: 'completes', code: 'CONFORMANCE_PROBE_FAILED', check: completes },
];

export function evaluateChecks(runs: readonly ProbeRun[], ctx: Context): ConformanceCheck[] {
  // A command that never started shows nothing the later checks could read: they are listed, not reached.
  const notStarted = runs.find((r) => r.result === undefined);
  return CHECKS.map(({ name, code, check }, i) => {
    if (notStarted && i > 0)
      return {
        name,
        code,
        ok: false,
        notReached: true,
        evidence: `not reached: the ${label(notStarted)} did not start`,
      };
    return { name, code, ...check(runs, ctx) };
  });
}
