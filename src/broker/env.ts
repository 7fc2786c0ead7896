/**
 * What the phases share: the broker-wide environment (upstream pool, leaf cache, auditor)
 * and the per-tunnel context (one CONNECT, one host, one session).
 */
import type { Logger } from 'pino';
import type { Agent } from 'undici';
import type { Auditor } from '../audit/emit.js';
import type { LeafCache } from './leaf-cache.js';
import type { Session } from './session.js';

export interface BrokerEnv {
  readonly upstream: Agent;
  readonly leaves: LeafCache;
  readonly auditor: Auditor;
  readonly logger: Logger | undefined;
}

/** One intercepted CONNECT tunnel. */
export interface Tunnel {
  readonly session: Session;
  /** the CONNECT host, lower-case */
  readonly host: string;
  /** the SNI the client sent when it differs from the CONNECT host */
  sniMismatch?: string;
}

/** Audits a refusal that happened outside the request pipeline (CONNECT, upgrade, parse error). */
export function auditBlocked(env: BrokerEnv, session: Session, host: string, f: { method: string; path: string; status: number; code: string; policyCode?: string; reason: string }): void {
  session.stats.requests++;
  session.stats.refused++;
  env.auditor.egress(session, {
    type: 'egress.blocked',
    time: new Date().toISOString(),
    session: session.id,
    ...(session.labels ? { labels: session.labels } : {}),
    method: f.method,
    host,
    path: f.path,
    decision: 'deny',
    reason: f.reason,
    code: f.code,
    ...(f.policyCode ? { policyCode: f.policyCode } : {}),
    status: f.status,
    requestBytes: 0,
    responseBytes: 0,
    durationMs: 0,
  });
}
