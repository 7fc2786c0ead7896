/**
 * Telling a vendor that wants a client certificate apart from every other TLS failure. The
 * broker never presents a certificate upstream, so such a vendor cannot be brokered: the
 * request is refused with CLI_CLIENT_CERT_UNSUPPORTED instead of looking like an outage.
 *
 * Only two things count, so that an unknown CA, a wrong name or a cipher mismatch keeps its
 * own failure:
 * - the `certificate_required` alert (TLS 1.3, alert 116): a server sends it only when the
 *   client sent no certificate, so it is enough on its own;
 * - a `handshake_failure` (40) or `bad_certificate` (42) alert after the vendor sent a
 *   CertificateRequest in this handshake: TLS 1.2 servers (and older TLS 1.3 ones) refuse a
 *   missing certificate that way. The same alerts without a CertificateRequest (no shared
 *   cipher, say) stay upstream failures.
 *
 * Whether a CertificateRequest came is read from the socket's shared signature algorithms:
 * a client fills that list only from the algorithms a CertificateRequest names, so it is
 * empty after any handshake in which the server asked for no certificate, and it can still
 * be read in the error handler of a handshake that failed.
 */
import type { TLSSocket } from 'node:tls';
import { BrokerError } from '../errors.js';

/** node's codes for the alerts above (OpenSSL's reason, upper-cased, behind `ERR_SSL_`). */
const CERTIFICATE_REQUIRED = 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED';
const AFTER_REQUEST: ReadonlySet<string> = new Set([
  'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
]);

/** The vendor sent a CertificateRequest in this connection's handshake. */
export function certificateRequested(socket: TLSSocket): boolean {
  try {
    return (socket.getSharedSigalgs()?.length ?? 0) > 0;
  } catch {
    // the handle is gone: nothing is known, so nothing is claimed
    return false;
  }
}

/**
 * The refusal for `err` when it is a vendor refusing a handshake without a client
 * certificate; undefined for any other failure, which is left as it is.
 */
export function clientCertRefusal(err: Error, socket: TLSSocket, host: string): BrokerError | undefined {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  if (code !== CERTIFICATE_REQUIRED && !(AFTER_REQUEST.has(code) && certificateRequested(socket)))
    return undefined;
  return new BrokerError('CLI_CLIENT_CERT_UNSUPPORTED', { details: { host }, cause: err });
}
