/**
 * Secrets never leak: every fixture logs through a capturing pino logger at
 * trace level and records every audit event; at teardown, the captured text must not
 * contain any secret the test handed in — nor any session's proxy secret.
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { AuditEvent } from '../../src/broker/types.js';

export interface LeakGuard {
  logger: Logger;
  onAudit(e: AuditEvent): void;
  /** also check these strings (a session's proxy secret, a minted token) */
  watch(...secrets: string[]): void;
  /** everything captured so far */
  readonly text: string;
  /** asserts that no watched secret appears; call after everything the test started has closed */
  assertClean(): void;
}

/** A capturing logger and audit sink for one test; the fixture calls assertClean() last in its teardown. */
export function leakGuard(secrets: readonly string[]): LeakGuard {
  const lines: string[] = [];
  const watched = new Set(secrets.filter((s) => s.length >= 8));
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = pino({ level: 'trace' }, sink);
  const guard: LeakGuard = {
    logger,
    onAudit: (e) => lines.push(JSON.stringify(e)),
    watch: (...more) => {
      for (const s of more) if (s.length >= 8) watched.add(s);
    },
    get text() {
      return lines.join('\n');
    },
    assertClean() {
      // Runs in teardown, where tap takes no assertions: a leak throws, which fails the test.
      const text = guard.text;
      const leaked = [...watched].filter((s) => text.includes(s));
      if (leaked.length > 0)
        throw new Error(
          `secret(s) ${leaked.map((s) => `${s.slice(0, 3)}…`).join(', ')} appeared in the ${lines.length} captured log lines and audit events`,
        );
    },
  };
  return guard;
}

/** The password part of a session proxy URL (`http://id:secret@host:port`). */
export function proxySecret(proxyUrl: string): string {
  return decodeURIComponent(new URL(proxyUrl).password);
}
