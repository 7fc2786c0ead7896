/**
 * What the phases share: the broker-wide environment (upstream pool, leaf cache, auditor)
 * and the per-tunnel context (one CONNECT, one host, one session), which the tunnel's own
 * socket carries. Nothing here names a request: the reader (inner.ts) keeps the tunnel's
 * pipelining bookkeeping, and the pipeline alone its request context.
 */
import type { Duplex } from 'node:stream';
import { TLSSocket, type TLSSocketOptions } from 'node:tls';
import type { Auditor } from '../audit/emit.js';
import type { BrokerLog } from '../audit/logger.js';
import type { LeafCache } from './leaf-cache.js';
import type { UpstreamPool } from './pool.js';
import type { Session } from './session.js';
import type { TunnelEvent } from './types.js';

export interface BrokerEnv {
  readonly upstream: UpstreamPool;
  readonly leaves: LeafCache;
  readonly auditor: Auditor;
  /** every log line the broker writes goes through here (redacted and capped) */
  readonly log: BrokerLog | undefined;
  readonly onTunnel?: ((event: TunnelEvent) => void) | undefined;
}

/** One intercepted CONNECT tunnel. */
export interface Tunnel {
  readonly session: Session;
  /** the CONNECT host, lower-case */
  readonly host: string;
  /** the SNI the client sent when it differs from the CONNECT host */
  sniMismatch?: string;
  /** requests the tunnel carried (upgrades included) */
  requests: number;
  /** the tunnel's socket has closed (the child left, or the session ended) */
  closed?: boolean;
  /**
   * Called when the tunnel's socket closes: one per request being forwarded, those whose
   * answers are queued behind an earlier pipelined one included.
   */
  readonly onClose: Set<() => void>;
}

/**
 * The decrypted side of one tunnel, carrying its context: the request reader (inner.ts) and
 * every request it reads find their tunnel on the connection itself rather than in a map
 * shared between modules.
 */
export class TunnelSocket extends TLSSocket {
  readonly tunnel: Tunnel;

  constructor(socket: Duplex, options: TLSSocketOptions, tunnel: Tunnel) {
    super(socket, options);
    this.tunnel = tunnel;
  }
}
