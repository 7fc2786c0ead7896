/**
 * One canonical audit line per request: the
 * event goes to pino (level by outcome), to `node:diagnostics_channel` for in-process
 * observers, and to the host's callback (the runner appends them to the durable store).
 */
import diagnostics_channel from 'node:diagnostics_channel';
import type { Logger } from 'pino';
import type { AuditEvent } from './types.js';
import { redactLogFields } from './logger.js';

/** Subscribe with `diagnostics_channel.subscribe(EGRESS_CHANNEL, fn)` to see every egress event. */
export const EGRESS_CHANNEL = 'clibroker:egress';
const egressChannel = diagnostics_channel.channel(EGRESS_CHANNEL);

/** The canonical log message of an egress event. */
export const EGRESS_MSG = 'CLIBROKER-EGRESS-DECISION';

export type AuditSink = (event: AuditEvent) => void;

export class Auditor {
  readonly #logger: Logger | undefined;
  readonly #sink: AuditSink | undefined;

  constructor(logger: Logger | undefined, sink: AuditSink | undefined) {
    this.#logger = logger;
    this.#sink = sink;
  }

  /**
   * Whether anything would receive an egress event of this session: the event (path redaction
   * included) is built only then.
   */
  wants(session: { readonly onAudit?: AuditSink | undefined }): boolean {
    return (
      this.#logger !== undefined ||
      this.#sink !== undefined ||
      session.onAudit !== undefined ||
      egressChannel.hasSubscribers
    );
  }

  /** Emits one egress event to the logger, the diagnostics channel, the broker's sink and the session's. */
  egress(session: { readonly onAudit?: AuditSink | undefined }, event: AuditEvent): void {
    if (this.#logger) {
      // The line's own timestamp is the event's time (both are taken in the same tick): logging
      // the event's `time` too would give the line two `time` keys, and JSON readers keep one.
      const { time: _time, ...fields } = event;
      if (event.decision === 'allow') this.#logger.info(fields, EGRESS_MSG);
      else this.#logger.warn(fields, EGRESS_MSG);
    }
    if (egressChannel.hasSubscribers) egressChannel.publish(event);
    this.#deliver(this.#sink, event);
    this.#deliver(session.onAudit, event);
  }

  #deliver(sink: AuditSink | undefined, event: AuditEvent): void {
    if (!sink) return;
    try {
      sink(event);
    } catch (err) {
      // A failing observer must not take the data path down; it is reported, not swallowed.
      // Redacted like every other broker line: a host's sink error could carry anything.
      this.#logger?.error(redactLogFields({ err }) as object, 'audit sink threw');
    }
  }
}
