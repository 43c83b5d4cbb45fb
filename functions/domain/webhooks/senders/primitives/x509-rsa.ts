// RSA signatures checked with a certificate the sender publishes and names in each request:
// Amazon SNS https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
// PayPal https://developer.paypal.com/api/rest/webhooks/rest/ (event headers, signature verification)
import { verify, X509Certificate, type KeyObject } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { crc32 } from 'node:zlib';
import { parseJsonWithinDepth } from '../../../../shared/json.js';
import { headerValue } from '../../headers.js';
import { decodeSignature } from '../../signatures/hmac.js';
import type { VerifyContext } from '../context.js';
import { SNS_SIGNED_FIELDS } from '../sns-fields.js';
import { equalsAny } from './equal-text.js';

/**
 * Where a certificate may be fetched from. The URL comes from the request, so this rule, fixed by
 * the catalog row, is all that stands between an attacker and a certificate of their own: it is
 * checked before any fetch. Only `https:` on the default port, no credentials, no query.
 */
export interface CertificateUrlRule {
  /**
   * Allowed hosts; `*` stands for exactly one DNS label, `{region}` for one label shaped as an AWS
   * region (`us-east-1`, `cn-north-1`, `us-gov-west-1`): `sns.{region}.amazonaws.com` allows
   * `sns.eu-west-1.amazonaws.com`, never `sns.s3.amazonaws.com` (where anyone's bucket named `sns` is).
   */
  hosts: readonly string[];
  /** The path must start with this, e.g. `/v1/notifications/certs/`. */
  pathPrefix?: string;
  /** The path must end with this, e.g. `.pem`. */
  pathSuffix?: string;
}

/**
 * How the signed message is read from a request: the senders differ too much to describe both
 * with parts (SNS signs JSON fields chosen by message type; PayPal signs headers and a CRC of the
 * body), so each is named here and the row supplies the rest.
 */
export type X509RsaParams =
  | {
      /**
       * An SNS HTTP(S) message: the canonical `Key\nValue\n` string of the fields AWS documents
       * for its `Type`; SignatureVersion 1 is SHA1withRSA, 2 is SHA256withRSA. The pasted secret
       * is the topic ARN that may post here: SNS signs for every topic alike, so without it any
       * AWS account's topic could deliver to this trigger.
       */
      message: 'aws_sns';
      certificateUrl: CertificateUrlRule;
      /**
       * The subject common names a signing certificate may have (`sns.amazonaws.com`, China's
       * `.cn` form); its chain must also lead to one of the trusted roots, as AWS's SDKs check.
       */
      signerCommonNames: readonly string[];
    }
  | {
      /**
       * A PayPal webhook: SHA256withRSA over `<transmission id>|<transmission time>|<webhook id>|<CRC32 of the body, decimal>`.
       * The pasted secret is the webhook ID, which PayPal signs into every delivery for it.
       */
      message: 'paypal';
      certificateUrl: CertificateUrlRule;
      /** Refuse a transmission time further than this from now; PayPal documents none. */
      toleranceSeconds?: number;
    };

type Hash = 'sha1' | 'sha256';

/** What a request claims: where its certificate is, the hash, the signature, and the signed bytes for each secret. */
interface Claim {
  certificateUrl: string;
  hash: Hash;
  signature: Buffer;
  /** The signed bytes, once for each pasted secret that can apply to this request (none: another topic). */
  signedFor(secrets: readonly string[]): Buffer[];
}

/**
 * True when the request is signed by the certificate it names, the certificate URL passes the
 * row's rule, and the request binds one of `ctx.secrets` (the SNS topic ARN, the PayPal webhook
 * ID). A URL outside the rule is refused before any fetch. Never throws on request content; a
 * failed fetch or an unparsable certificate is `false`.
 */
export async function verifyX509Rsa(params: X509RsaParams, ctx: VerifyContext): Promise<boolean> {
  const claim = params.message === 'aws_sns' ? readSnsMessage(ctx) : readPayPalDelivery(params.toleranceSeconds, ctx);
  if (!claim || !certificateUrlAllowed(claim.certificateUrl, params.certificateUrl)) return false;
  const messages = claim.signedFor(ctx.secrets);
  if (messages.length === 0) return false; // nothing this trigger accepts: no need to fetch
  let certificate: string;
  try {
    certificate = await ctx.keys.fetchText(claim.certificateUrl);
  } catch {
    return false;
  }
  const key = publicKeyOf(certificate, ctx.request.nowSeconds, params.message === 'aws_sns'
    ? { commonNames: params.signerCommonNames, roots: ctx.keys.trustedRoots ?? rootCertificates }
    : undefined);
  if (!key) return false;
  return messages.some((message) => verifies(claim.hash, message, key, claim.signature));
}

/** True when `url` is an https URL that `rule` allows; exported so the receiver can record a refused certificate URL. */
export function certificateUrlAllowed(url: string, rule: CertificateUrlRule): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'https:' || parsed.port !== '' || parsed.username !== '' || parsed.password !== '') return false;
  if (parsed.search !== '' || parsed.hash !== '') return false;
  if (rule.pathPrefix !== undefined && !parsed.pathname.startsWith(rule.pathPrefix)) return false;
  if (rule.pathSuffix !== undefined && !parsed.pathname.endsWith(rule.pathSuffix)) return false;
  return rule.hosts.some((pattern) => hostMatches(parsed.hostname, pattern));
}

/**
 * True when `url` is an https URL on one of the sender's `hosts`, query allowed: what a
 * handshake may send the receiver to (SNS's SubscribeURL), where a certificate URL is stricter.
 */
export function urlOnSenderHosts(url: string, hosts: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'https:' || parsed.port !== '' || parsed.username !== '' || parsed.password !== '' || parsed.hash !== '') return false;
  return hosts.some((pattern) => hostMatches(parsed.hostname, pattern));
}

const DNS_LABEL = /^[a-z0-9-]{1,63}$/;
/** An AWS region's name: letters, then one or two words, then a number (`us-east-1`, `us-gov-west-1`, `ap-southeast-4`). */
const AWS_REGION = /^[a-z]{2}(-[a-z]+){1,2}-\d{1,2}$/;

/** Label by label, so `sns.x.amazonaws.com.evil.example` and `evil-amazonaws.com` never match. */
function hostMatches(hostname: string, pattern: string): boolean {
  const labels = hostname.split('.');
  const wanted = pattern.toLowerCase().split('.');
  return labels.length === wanted.length && wanted.every((label, i) =>
    label === '*' ? DNS_LABEL.test(labels[i]!) : label === '{region}' ? AWS_REGION.test(labels[i]!) : label === labels[i]);
}

/** What a signing certificate must be besides valid: named so, and issued under one of these roots (PEM). */
interface SignerRule {
  commonNames: readonly string[];
  roots: readonly string[];
}

interface CertificateEntry {
  key: KeyObject;
  /** When the signer's certificate is valid. */
  validFromSeconds: number;
  validToSeconds: number;
  /** When every certificate served with it is valid too: the latest start and the earliest end. */
  chainValidFromSeconds: number;
  chainValidToSeconds: number;
  /** The chain as served, leaf first. */
  chain: X509Certificate[];
  /** Each rule's verdict on this certificate, kept: a certificate is judged once, not per request. */
  verdicts: WeakMap<SignerRule['roots'], boolean>;
}

/** Keys of certificates seen recently (`null`: not an RSA certificate). Bounded; keyed by the PEM text. */
const certificateKeys = new Map<string, CertificateEntry | null>();
const MAX_CERTIFICATES = 64;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/**
 * The RSA public key of a PEM certificate valid at `nowSeconds` (and, with `signer`, named and
 * issued as it says); `undefined` otherwise.
 */
function publicKeyOf(pem: string, nowSeconds: number, signer?: SignerRule): KeyObject | undefined {
  let entry = certificateKeys.get(pem);
  if (entry === undefined) {
    entry = null;
    try {
      // The first certificate is the signer's own; any after it are its issuers (PayPal serves the chain).
      const chain = (pem.match(PEM_CERTIFICATE) ?? []).map((text) => new X509Certificate(text));
      const leaf = chain[0];
      if (leaf?.publicKey.asymmetricKeyType === 'rsa') {
        entry = {
          key: leaf.publicKey,
          validFromSeconds: Date.parse(leaf.validFrom) / 1000,
          validToSeconds: Date.parse(leaf.validTo) / 1000,
          chainValidFromSeconds: Math.max(...chain.map((c) => Date.parse(c.validFrom) / 1000)),
          chainValidToSeconds: Math.min(...chain.map((c) => Date.parse(c.validTo) / 1000)),
          chain,
          verdicts: new WeakMap(),
        };
      }
    } catch {
      entry = null;
    }
    if (certificateKeys.size >= MAX_CERTIFICATES) certificateKeys.clear();
    certificateKeys.set(pem, entry);
  }
  // An expired certificate is refused: its key may no longer be the sender's alone.
  if (!entry || !(nowSeconds >= entry.validFromSeconds && nowSeconds <= entry.validToSeconds)) return undefined;
  if (signer) {
    if (!(nowSeconds >= entry.chainValidFromSeconds && nowSeconds <= entry.chainValidToSeconds)) return undefined;
    let verdict = entry.verdicts.get(signer.roots);
    if (verdict === undefined) {
      const name = commonNameOf(entry.chain[0]!);
      verdict = name !== undefined && signer.commonNames.includes(name) && chainsToRoot(entry.chain, signer.roots, nowSeconds);
      entry.verdicts.set(signer.roots, verdict);
    }
    if (!verdict) return undefined;
  }
  return entry.key;
}

/** The subject's common name; `undefined` when it has none or several. */
function commonNameOf(certificate: X509Certificate): string | undefined {
  const names = certificate.subject.split('\n').filter((line) => line.startsWith('CN=')).map((line) => line.slice(3));
  return names.length === 1 ? names[0] : undefined;
}

/** Parsed roots, once per roots list (Node's bundle is about 140 certificates). */
const parsedRoots = new WeakMap<readonly string[], X509Certificate[]>();

/**
 * True when each certificate of `chain` is issued and signed by the next, every issuer a CA, and
 * the last is issued and signed by one of `roots` valid at `nowSeconds` (or is one of them). The
 * chain's own validity is checked on every use by the caller; this verdict is kept.
 */
function chainsToRoot(chain: readonly X509Certificate[], roots: readonly string[], nowSeconds: number): boolean {
  let anchors = parsedRoots.get(roots);
  if (!anchors) {
    anchors = roots.flatMap((text) => {
      try {
        return [new X509Certificate(text)];
      } catch {
        return [];
      }
    });
    parsedRoots.set(roots, anchors);
  }
  const issuedBy = (child: X509Certificate, parent: X509Certificate) => parent.ca && child.checkIssued(parent) && child.verify(parent.publicKey);
  for (let i = 0; i + 1 < chain.length; i++) if (!issuedBy(chain[i]!, chain[i + 1]!)) return false;
  const last = chain[chain.length - 1]!;
  return anchors.some((root) => root.fingerprint256 === last.fingerprint256 || (issuedBy(last, root) && validAt(root, nowSeconds)));
}

const validAt = (certificate: X509Certificate, nowSeconds: number) =>
  nowSeconds >= Date.parse(certificate.validFrom) / 1000 && nowSeconds <= Date.parse(certificate.validTo) / 1000;

function verifies(hash: Hash, message: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    return verify(hash, message, key, signature); // RSASSA-PKCS1-v1_5, the default for an RSA key
  } catch {
    return false;
  }
}

/** Fields a message may leave out: a notification published without a subject has none. */
const SNS_OPTIONAL_FIELDS = new Set(['Subject']);
/**
 * SignatureVersion 2 (SHA256withRSA) only: version 1 is SHA1, whose collisions are practical, and
 * a topic is switched to 2 with one attribute (`SignatureVersion`), as the catalog listing says.
 */
const SNS_HASH: Record<string, Hash> = { '2': 'sha256' };

function readSnsMessage(ctx: VerifyContext): Claim | undefined {
  const { rawBody } = ctx.request;
  // A view of the bytes, not a copy: SNS messages reach 256 KB. Read before the request is
  // verified, so its nesting is checked before it is parsed.
  const message = parseJsonWithinDepth(Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8'));
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const field = (name: string): string | undefined => {
    const value: unknown = Object.hasOwn(message, name) ? (message as Record<string, unknown>)[name] : undefined;
    return typeof value === 'string' ? value : undefined;
  };
  const type = field('Type');
  const fields = type !== undefined && Object.hasOwn(SNS_SIGNED_FIELDS, type) ? SNS_SIGNED_FIELDS[type]! : undefined;
  const version = field('SignatureVersion');
  const hash = version !== undefined && Object.hasOwn(SNS_HASH, version) ? SNS_HASH[version]! : undefined;
  const signatureText = field('Signature');
  const certificateUrl = field('SigningCertURL');
  const topicArn = field('TopicArn');
  if (!fields || !hash || signatureText === undefined || certificateUrl === undefined || topicArn === undefined) return undefined;
  const signature = decodeSignature(signatureText, 'base64');
  if (!signature) return undefined;
  let canonical = '';
  for (const name of fields) {
    const value = field(name);
    if (value === undefined) {
      // Absent, not present as another type: a `Subject` object would be left out of the signed
      // string and still be handed to the flow.
      if (SNS_OPTIONAL_FIELDS.has(name) && !Object.hasOwn(message, name)) continue;
      return undefined;
    }
    canonical += `${name}\n${value}\n`;
  }
  const signed = Buffer.from(canonical, 'utf8');
  // The topic is inside the signed string, so matching it against the pasted ARNs binds the signature to this trigger.
  return { certificateUrl, hash, signature, signedFor: (secrets) => (equalsAny(topicArn, secrets.map((s) => s.trim())) ? [signed] : []) };
}

/** PayPal's only algorithm; the header names it, but the algorithm is ours to fix, not the request's. */
const PAYPAL_AUTH_ALGO = 'SHA256withRSA';
/** RFC 3339 date-time, as PayPal sends PAYPAL-TRANSMISSION-TIME (e.g. `2016-02-18T20:01:35Z`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function readPayPalDelivery(toleranceSeconds: number | undefined, ctx: VerifyContext): Claim | undefined {
  const { headers, rawBody, nowSeconds } = ctx.request;
  const id = headerValue(headers, 'paypal-transmission-id');
  const time = headerValue(headers, 'paypal-transmission-time');
  const signatureText = headerValue(headers, 'paypal-transmission-sig');
  const certificateUrl = headerValue(headers, 'paypal-cert-url');
  if (id === undefined || time === undefined || signatureText === undefined || certificateUrl === undefined) return undefined;
  if (headerValue(headers, 'paypal-auth-algo') !== PAYPAL_AUTH_ALGO) return undefined;
  if (toleranceSeconds !== undefined) {
    const sentMs = RFC3339.test(time) ? Date.parse(time) : Number.NaN;
    if (!(Math.abs(nowSeconds - sentMs / 1000) <= toleranceSeconds)) return undefined;
  }
  const signature = decodeSignature(signatureText, 'base64');
  if (!signature) return undefined;
  // CRC32 as an unsigned decimal, as PayPal's own sample computes it.
  const checksum = crc32(rawBody);
  return {
    certificateUrl,
    hash: 'sha256',
    signature,
    signedFor: (secrets) => secrets.map((webhookId) => Buffer.from(`${id}|${time}|${webhookId.trim()}|${checksum}`, 'utf8')),
  };
}

const SNS_TOPIC_ARN = /^arn:aws(-cn|-us-gov)?:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;
const PAYPAL_WEBHOOK_ID = /^[A-Za-z0-9]{1,50}$/;

/** Why a pasted value would never verify for this row (a topic ARN for SNS, a webhook ID for PayPal); `undefined` when usable. */
export function checkX509RsaSecret(secret: string, params: X509RsaParams): string | undefined {
  const value = secret.trim();
  if (params.message === 'aws_sns') {
    return SNS_TOPIC_ARN.test(value) ? undefined : 'an SNS topic ARN looks like arn:aws:sns:us-east-1:123456789012:my-topic';
  }
  return PAYPAL_WEBHOOK_ID.test(value)
    ? undefined
    : 'a PayPal webhook ID is up to 50 letters and digits (e.g. 1JE4291016473214C), shown beside the webhook in the developer dashboard';
}
