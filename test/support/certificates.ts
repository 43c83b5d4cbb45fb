/**
 * Self-signed X.509 certificates made with `node:crypto` alone, for tests: a sender's signing
 * certificate (SNS, PayPal) served from a local server, and the local HTTPS server's own. Node can
 * parse certificates but not issue them, so this writes the few DER structures of RFC 5280 by hand
 * rather than adding a dependency for it.
 */
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export interface TestCertificate {
  /** The certificate, PEM-encoded. */
  pem: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export interface CertificateOptions {
  commonName: string;
  /** DNS names and IPv4 addresses for subjectAltName (TLS checks these). */
  altNames?: string[];
  /** Validity; by default from a day ago to a year ahead. */
  notBefore?: Date;
  notAfter?: Date;
  /** Reuse a key pair (several certificates for one key); a new 2048-bit RSA pair otherwise. */
  keyPair?: { privateKey: KeyObject; publicKey: KeyObject };
  /** Issued (signed) by this CA, named as its subject; self-signed otherwise. */
  issuer?: { certificate: TestCertificate; commonName: string };
  /** basicConstraints CA; true for a self-signed certificate, false for an issued one by default. */
  ca?: boolean;
  /** An Authority Information Access "CA Issuers" URI, where the issuer's certificate is published. */
  caIssuers?: string;
}

/**
 * A test certificate authority and a leaf it issued, as a sender's signing certificate chains to a
 * public root: the root stands in for the bundled roots the verifier trusts.
 */
export function certificateChain(leaf: CertificateOptions, rootName = 'Flowgate Test Root CA'): { root: TestCertificate; leaf: TestCertificate } {
  const root = selfSignedCertificate({ commonName: rootName, notBefore: leaf.notBefore, notAfter: leaf.notAfter });
  return { root, leaf: selfSignedCertificate({ ...leaf, issuer: { certificate: root, commonName: rootName } }) };
}

/** An RSA certificate (sha256WithRSAEncryption), self-signed unless `issuer` is given. */
export function selfSignedCertificate(options: CertificateOptions): TestCertificate {
  const { privateKey, publicKey } = options.keyPair ?? generateKeyPairSync('rsa', { modulusLength: 2048 });
  const notBefore = options.notBefore ?? new Date(Date.now() - 24 * 3600 * 1000);
  const notAfter = options.notAfter ?? new Date(Date.now() + 365 * 24 * 3600 * 1000);
  const sha256WithRsa = seq(oid('1.2.840.113549.1.1.11'), nul());
  const nameOf = (commonName: string) => seq(set(seq(oid('2.5.4.3'), utf8(commonName))));
  const name = nameOf(options.commonName);
  const isCa = options.ca ?? !options.issuer;
  const extensions: Buffer[] = [
    // basicConstraints CA:TRUE, so OpenSSL accepts the certificate as its own trust anchor.
    isCa ? seq(oid('2.5.29.19'), bool(true), octets(seq(bool(true)))) : seq(oid('2.5.29.19'), octets(seq())),
  ];
  if (options.altNames?.length) {
    const names = options.altNames.map((alt) =>
      /^\d+\.\d+\.\d+\.\d+$/.test(alt) ? tlv(0x87, Buffer.from(alt.split('.').map(Number))) : tlv(0x82, Buffer.from(alt, 'ascii')),
    );
    extensions.push(seq(oid('2.5.29.17'), octets(seq(...names))));
  }
  if (options.caIssuers !== undefined) {
    // id-pe-authorityInfoAccess: one AccessDescription, id-ad-caIssuers with a uniformResourceIdentifier [6].
    const access = seq(oid('1.3.6.1.5.5.7.48.2'), tlv(0x86, Buffer.from(options.caIssuers, 'ascii')));
    extensions.push(seq(oid('1.3.6.1.5.5.7.1.1'), octets(seq(access))));
  }
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))), // version v3
    integer(randomBytes(8)), // serial number
    sha256WithRsa,
    options.issuer ? nameOf(options.issuer.commonName) : name,
    seq(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ format: 'der', type: 'spki' }),
    tlv(0xa3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, options.issuer?.certificate.privateKey ?? privateKey);
  const der = seq(tbs, sha256WithRsa, bitString(signature));
  const pem = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`;
  return { pem, privateKey, publicKey };
}

function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  let header: number[];
  if (length < 0x80) header = [tag, length];
  else if (length < 0x100) header = [tag, 0x81, length];
  else if (length < 0x10000) header = [tag, 0x82, length >> 8, length & 0xff];
  else header = [tag, 0x83, length >> 16, (length >> 8) & 0xff, length & 0xff];
  return Buffer.concat([Buffer.from(header), content]);
}
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const nul = () => Buffer.from([0x05, 0x00]);
const bool = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0x00]));
const octets = (content: Buffer) => tlv(0x04, content);
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, 'utf8'));
const bitString = (content: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), content]));
/**
 * A positive INTEGER in DER's one encoding: no leading zero byte unless the next has its high bit
 * set, and one then. (A random serial starting 0x00 0x0_–0x7_, one in 512, was refused by OpenSSL
 * as "illegal padding".)
 */
function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && !(bytes[start + 1]! & 0x80)) start++;
  const minimal = bytes.subarray(start);
  return tlv(0x02, minimal[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), minimal]) : minimal);
}

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) base128.unshift((value & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z'; // YYYYMMDDHHMMSSZ
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2), 'ascii')) : tlv(0x18, Buffer.from(iso, 'ascii'));
}
