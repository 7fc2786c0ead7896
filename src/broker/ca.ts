/**
 * The broker's certificate authority: an ECDSA P-256 CA (generated in memory unless one is
 * given) that mints a leaf per intercepted host. All leaves of one CA share one key pair,
 * so minting a leaf is one ECDSA signature (tens of µs) instead of a key generation; the
 * key never leaves the process and the CA is the trust boundary anyway (mitmproxy does the
 * same). A CA can be name-constrained to a session's egress hosts (RFC 5280 §4.2.1.10), so a
 * stolen CA key cannot be used to impersonate anything else to that child.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  X509Certificate,
} from 'node:crypto';
import {
  bits,
  bool,
  ctx,
  ctxPrim,
  namedBits,
  octets,
  oid,
  seq,
  set,
  smallInt,
  time,
  tlv,
  toPem,
  uint,
  utf8,
} from './der.js';

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyId: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  nameConstraints: '2.5.29.30',
  authorityKeyId: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

const SIG_ALG = seq(oid(OID.ecdsaWithSha256));
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface CertificateAuthority {
  readonly certPem: string;
  readonly keyPem: string;
  /** DNS names this CA is constrained to, when it is */
  readonly permittedHosts: readonly string[] | undefined;
  /**
   * Mints a leaf certificate for `hosts` (DNS names; the first is the subject CN, all are
   * subjectAltNames); returns the leaf PEM and the shared leaf key PEM.
   */
  mintLeaf(hosts: string | readonly string[]): { certPem: string; keyPem: string };
}

function name(cn: string): Buffer {
  return seq(set(seq(oid(OID.organization), utf8('clibroker'))), set(seq(oid(OID.commonName), utf8(cn))));
}

function ext(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value));
}

function keyId(spkiDer: Buffer): Buffer {
  return createHash('sha1').update(spkiDer).digest();
}

function serial(): Buffer {
  const b = randomBytes(16);
  b[0]! &= 0x7f;
  return uint(b);
}

function signCert(tbs: Buffer, key: KeyObject): Buffer {
  return seq(tbs, SIG_ALG, bits(sign('sha256', tbs, key)));
}

interface CaParts {
  key: KeyObject;
  subject: Buffer;
  keyIdentifier: Buffer;
}

/** Creates a CA; with `permittedHosts` the CA carries a critical nameConstraints extension. */
export function createCertificateAuthority(
  opts: { commonName?: string; permittedHosts?: readonly string[]; validDays?: number } = {},
): CertificateAuthority {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const subject = name(opts.commonName ?? 'clibroker interception CA');
  const skid = keyId(spki);
  const now = Date.now();
  const exts = [
    ext(OID.basicConstraints, true, seq(bool(true), smallInt(0))),
    ext(OID.keyUsage, true, namedBits([0, 5, 6])), // digitalSignature, keyCertSign, cRLSign
    ext(OID.subjectKeyId, false, octets(skid)),
  ];
  if (opts.permittedHosts) {
    const subtrees = opts.permittedHosts.map((h) => seq(ctxPrim(2, Buffer.from(h, 'ascii'))));
    exts.push(ext(OID.nameConstraints, true, seq(ctx(0, ...subtrees))));
  }
  const tbs = seq(
    ctx(0, smallInt(2)),
    serial(),
    SIG_ALG,
    subject,
    seq(time(new Date(now - HOUR)), time(new Date(now + (opts.validDays ?? 365) * DAY))),
    subject,
    spki,
    ctx(3, seq(...exts)),
  );
  const certPem = toPem('CERTIFICATE', signCert(tbs, privateKey));
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  return fromParts(certPem, keyPem, { key: privateKey, subject, keyIdentifier: skid }, opts.permittedHosts);
}

/** Loads a CA from PEM (an operator-provided CA); its subject and key id are read from the certificate. */
export function loadCertificateAuthority(certPem: string, keyPem: string): CertificateAuthority {
  const x509 = new X509Certificate(certPem);
  if (!x509.ca) throw new TypeError('the given certificate is not a CA (basicConstraints cA is false)');
  const key = createPrivateKey(keyPem);
  if (!x509.checkPrivateKey(key)) throw new TypeError('the CA key does not match the CA certificate');
  const subject = subjectDer(x509.raw);
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  return fromParts(certPem, keyPem, { key, subject, keyIdentifier: keyId(spki) }, undefined);
}

function fromParts(
  certPem: string,
  keyPem: string,
  ca: CaParts,
  permittedHosts: readonly string[] | undefined,
): CertificateAuthority {
  const leafKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const leafSpki = leafKeys.publicKey.export({ type: 'spki', format: 'der' });
  const leafKeyPem = leafKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  // Everything but the serial, validity and names is the same for every leaf: build it once.
  const leafExtsFixed = [
    ext(OID.basicConstraints, true, seq()),
    ext(OID.keyUsage, true, namedBits([0])),
    ext(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
    ext(OID.subjectKeyId, false, octets(keyId(leafSpki))),
    ext(OID.authorityKeyId, false, seq(ctxPrim(0, ca.keyIdentifier))),
  ];
  return {
    certPem,
    keyPem,
    permittedHosts,
    mintLeaf(hosts: string | readonly string[]) {
      const names = typeof hosts === 'string' ? [hosts] : hosts;
      const host = names[0]!;
      const now = Date.now();
      const san = ext(
        OID.subjectAltName,
        false,
        seq(...names.map((h) => ctxPrim(2, Buffer.from(h, 'ascii')))),
      );
      const tbs = seq(
        ctx(0, smallInt(2)),
        serial(),
        SIG_ALG,
        ca.subject,
        // Short-lived: leaves live only in this process's memory.
        seq(time(new Date(now - HOUR)), time(new Date(now + 7 * DAY))),
        seq(set(seq(oid(OID.commonName), utf8(host)))),
        leafSpki,
        ctx(3, seq(san, ...leafExtsFixed)),
      );
      return { certPem: toPem('CERTIFICATE', signCert(tbs, ca.key)), keyPem: leafKeyPem };
    },
  };
}

/** The subject Name of a DER certificate: tbs fields are version, serial, sigAlg, issuer, validity, subject. */
function subjectDer(cert: Buffer): Buffer {
  const tbs = children(children(cert)[0]!.value)[0]!; // Certificate → tbsCertificate
  const fields = children(tbs.value);
  const first = fields[0]!.tag === 0xa0 ? 1 : 0; // optional [0] version
  return fields[first + 4]!.whole;
}

function children(der: Buffer): { tag: number; value: Buffer; whole: Buffer }[] {
  const out: { tag: number; value: Buffer; whole: Buffer }[] = [];
  let i = 0;
  while (i < der.length) {
    const tag = der[i]!;
    let len = der[i + 1]!;
    let hdr = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let k = 0; k < n; k++) len = len * 256 + der[i + 2 + k]!;
      hdr += n;
    }
    out.push({ tag, value: der.subarray(i + hdr, i + hdr + len), whole: der.subarray(i, i + hdr + len) });
    i += hdr + len;
  }
  return out;
}

// tlv is re-exported for tests that build odd certificates.
export { tlv };
