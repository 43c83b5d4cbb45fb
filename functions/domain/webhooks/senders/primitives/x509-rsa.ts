// RSA signatures checked with a certificate the sender publishes and names in each request:
// Amazon SNS https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
// PayPal https://developer.paypal.com/api/rest/webhooks/rest/ (event headers, signature verification)
import { verify, X509Certificate, type KeyObject } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { crc32 } from 'node:zlib';
import { parseJsonWithinDepth } from '../../../../shared/json.js';
import { headerValue } from '../../headers.js';
import { decodeSignature } from '../../signatures/hmac.js';
import type { KeyFetcher, VerifyContext } from '../context.js';
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
      /**
       * Hosts (patterns as in `CertificateUrlRule.hosts`) an issuer certificate may be fetched from
       * when the served chain stops short of a trusted root: SNS serves only its leaf, whose issuer
       * (an Amazon or DigiCert intermediate) no root bundle holds. Browsers and .NET fetch it from
       * the certificate's Authority Information Access "CA Issuers" URI; so does this, from these
       * hosts only. Absent: no issuer is fetched.
       */
      issuerHosts?: readonly string[];
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
  const key = params.message === 'aws_sns'
    ? await signerKeyOf(certificate, ctx.request.nowSeconds, {
        commonNames: params.signerCommonNames,
        roots: ctx.keys.trustedRoots ?? rootCertificates,
        issuerHosts: params.issuerHosts ?? [],
      }, ctx.keys)
    : publicKeyOf(certificate, ctx.request.nowSeconds);
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

/** What a signing certificate must be besides valid: named so, and issued under one of these roots (PEM), its missing issuers fetched only from these hosts. */
interface SignerRule {
  commonNames: readonly string[];
  roots: readonly string[];
  issuerHosts: readonly string[];
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

/** The parsed certificate (and the chain served with it), kept by PEM text; `null` when not an RSA certificate. */
function certificateEntryOf(pem: string): CertificateEntry | null {
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
  return entry;
}

/** The RSA public key of a PEM certificate valid at `nowSeconds`; `undefined` otherwise. */
function publicKeyOf(pem: string, nowSeconds: number): KeyObject | undefined {
  const entry = certificateEntryOf(pem);
  // An expired certificate is refused: its key may no longer be the sender's alone.
  if (!entry || !(nowSeconds >= entry.validFromSeconds && nowSeconds <= entry.validToSeconds)) return undefined;
  return entry.key;
}

/**
 * The RSA public key of a PEM signing certificate valid at `nowSeconds`, named and issued as
 * `signer` says, its chain completed from the issuers' published certificates where the served
 * chain stops short of a root; `undefined` otherwise.
 */
async function signerKeyOf(pem: string, nowSeconds: number, signer: SignerRule, keys: KeyFetcher): Promise<KeyObject | undefined> {
  const key = publicKeyOf(pem, nowSeconds);
  const entry = certificateEntryOf(pem);
  if (!key || !entry) return undefined;
  if (!(nowSeconds >= entry.chainValidFromSeconds && nowSeconds <= entry.chainValidToSeconds)) return undefined;
  let verdict = entry.verdicts.get(signer.roots);
  if (verdict === undefined) {
    const name = commonNameOf(entry.chain[0]!);
    if (name === undefined || !signer.commonNames.includes(name)) verdict = false;
    else {
      const anchors = anchorsOf(signer.roots);
      const completed = await completeChain(entry.chain, anchors, signer.issuerHosts, nowSeconds, keys);
      // A failed fetch is not a verdict: the fetcher remembers the failure for a while, this does not.
      if (completed === 'unreachable') return undefined;
      verdict = completed !== undefined && chainsToRoot(completed, anchors, nowSeconds);
      if (verdict && completed!.length > entry.chain.length) {
        // The fetched issuers bound the chain's validity too, checked on every use like the served ones.
        const fetched = completed!.slice(entry.chain.length);
        entry.chainValidFromSeconds = Math.max(entry.chainValidFromSeconds, ...fetched.map((c) => Date.parse(c.validFrom) / 1000));
        entry.chainValidToSeconds = Math.min(entry.chainValidToSeconds, ...fetched.map((c) => Date.parse(c.validTo) / 1000));
      }
    }
    entry.verdicts.set(signer.roots, verdict);
  }
  return verdict ? key : undefined;
}

/** Issuers fetched at most this many times per chain: SNS's leaf is two links from its root (leaf, intermediate, root). */
const MAX_ISSUER_HOPS = 2;

/**
 * `chain` with its missing issuers appended, fetched from each last certificate's AIA "CA
 * Issuers" URI on `issuerHosts`, until the last is issued by (or is) one of `anchors`;
 * `undefined` when it cannot be completed (no allowed URI, not the issuer, too many hops);
 * `'unreachable'` when a fetch failed.
 */
async function completeChain(
  chain: readonly X509Certificate[],
  anchors: readonly X509Certificate[],
  issuerHosts: readonly string[],
  nowSeconds: number,
  keys: KeyFetcher,
): Promise<X509Certificate[] | undefined | 'unreachable'> {
  const completed = [...chain];
  for (let hop = 0; ; hop++) {
    const last = completed[completed.length - 1]!;
    if (anchors.some((root) => root.fingerprint256 === last.fingerprint256 || last.checkIssued(root))) return completed;
    if (hop === MAX_ISSUER_HOPS || issuerHosts.length === 0 || !keys.fetchIssuer) return undefined;
    const url = caIssuersUrlOf(last, issuerHosts);
    if (url === undefined) return undefined;
    let bytes: Uint8Array;
    try {
      bytes = await keys.fetchIssuer(url);
    } catch {
      return 'unreachable';
    }
    let issuer: X509Certificate;
    try {
      // DER, as Amazon and DigiCert publish them, or PEM.
      issuer = new X509Certificate(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    } catch {
      return undefined;
    }
    if (!issuer.ca || !last.checkIssued(issuer) || !last.verify(issuer.publicKey) || !validAt(issuer, nowSeconds)) return undefined;
    completed.push(issuer);
  }
}

/**
 * The certificate's AIA "CA Issuers" URI, when one is on `hosts` over http or https on the
 * default port. Plain http is what CAs publish these on, and is safe here: the certificate
 * fetched is believed only once its signature chains to a bundled root.
 */
function caIssuersUrlOf(certificate: X509Certificate, hosts: readonly string[]): string | undefined {
  const lines = (certificate.infoAccess ?? '').split('\n');
  for (const line of lines) {
    const match = /^CA Issuers - URI:(.*)$/.exec(line);
    if (!match) continue;
    let text = match[1]!;
    // Node quotes a value holding separators as a JSON string.
    if (text.startsWith('"')) {
      try {
        text = JSON.parse(text) as string;
      } catch {
        continue;
      }
    }
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    if (url.port !== '' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') continue;
    if (hosts.some((pattern) => hostMatches(url.hostname, pattern))) return url.href;
  }
  return undefined;
}

/** The subject's common name; `undefined` when it has none or several. */
function commonNameOf(certificate: X509Certificate): string | undefined {
  const names = certificate.subject.split('\n').filter((line) => line.startsWith('CN=')).map((line) => line.slice(3));
  return names.length === 1 ? names[0] : undefined;
}

/** Parsed roots, once per roots list (Node's bundle is about 140 certificates). */
const parsedRoots = new WeakMap<readonly string[], X509Certificate[]>();

function anchorsOf(roots: readonly string[]): X509Certificate[] {
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
  return anchors;
}

/**
 * True when each certificate of `chain` is issued and signed by the next, every issuer a CA, and
 * the last is issued and signed by one of `anchors` valid at `nowSeconds` (or is one of them). The
 * chain's own validity is checked on every use by the caller; this verdict is kept.
 */
function chainsToRoot(chain: readonly X509Certificate[], anchors: readonly X509Certificate[], nowSeconds: number): boolean {
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
