// ECDSA P-256 with SHA-256 over `<timestamp><raw body>`, as SendGrid signs its Event Webhook:
// https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { VerifyContext } from '../context.js';
import { readTimestampedBody, type TimestampedBodyParams } from './timestamped-body.js';

/** Where the signature (ASN.1 DER, base64) and the signed timestamp are; the key is the pasted secret. */
export type EcdsaP256Params = TimestampedBodyParams;

/** OpenSSL's name for NIST P-256 (secp256r1). */
const P256 = 'prime256v1';

/** Keys seen recently, imported once (`null`: not a P-256 public key). Bounded. */
const importedKeys = new Map<string, KeyObject | null>();
const MAX_IMPORTED_KEYS = 256;

/**
 * The key object for a pasted key: base64 DER SubjectPublicKeyInfo as SendGrid shows it, or the
 * same wrapped as PEM. `undefined` when it is anything else, including a key on another curve.
 */
function importKey(secret: string): KeyObject | undefined {
  const known = importedKeys.get(secret);
  if (known !== undefined) return known ?? undefined;
  let key: KeyObject | null = null;
  try {
    const base64 = secret.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, '').replace(/\s+/g, '');
    const der = Buffer.from(base64, 'base64');
    // Buffer.from skips what it cannot decode; re-encoding tells a clean key from one with junk in it.
    if (der.length > 0 && der.toString('base64') === base64) {
      const candidate = createPublicKey({ key: der, format: 'der', type: 'spki' });
      if (candidate.asymmetricKeyType === 'ec' && candidate.asymmetricKeyDetails?.namedCurve === P256) key = candidate;
    }
  } catch {
    key = null;
  }
  if (importedKeys.size >= MAX_IMPORTED_KEYS) importedKeys.clear();
  importedKeys.set(secret, key);
  return key ?? undefined;
}

/**
 * True when the request carries a valid ECDSA P-256 / SHA-256 signature over `<timestamp><raw body>`
 * by one of `ctx.secrets` (public keys; several during a rotation). Never throws on request content.
 */
export function verifyEcdsaP256(params: EcdsaP256Params, ctx: VerifyContext): boolean {
  const read = readTimestampedBody(params, ctx.request);
  if (!read) return false;
  for (const secret of ctx.secrets) {
    const key = importKey(secret);
    if (key && verifies(read.signed, key, read.signature)) return true;
  }
  return false;
}

function verifies(signed: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    // `der` is SendGrid's encoding (an ASN.1 SEQUENCE of r and s), not the 64-byte r||s of JOSE.
    return verify('sha256', signed, { key, dsaEncoding: 'der' }, signature);
  } catch {
    return false; // a signature that is not DER makes OpenSSL throw rather than answer false
  }
}

/** Why a pasted ECDSA public key would never verify; `undefined` when it is usable. */
export function checkEcdsaP256Secret(secret: string): string | undefined {
  if (!importKey(secret)) {
    return 'an ECDSA verification key (SendGrid: the Verification Key of the signed Event Webhook) is a base64 DER P-256 public key, starting MFkw';
  }
  return undefined;
}
