// Ed25519 over `<timestamp><raw body>`, as Discord signs interactions:
// https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { VerifyContext } from '../context.js';
import { readTimestampedBody, type TimestampedBodyParams } from './timestamped-body.js';

/** Where the signature and the signed timestamp are; the key is the pasted secret (64 hex characters). */
export type Ed25519Params = TimestampedBodyParams;

const PUBLIC_KEY_HEX = /^[0-9a-fA-F]{64}$/;
const SIGNATURE_BYTES = 64;
/**
 * DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4): SEQUENCE { SEQUENCE { OID 1.3.101.112 },
 * BIT STRING (0 unused bits) } with the 32 raw key bytes to follow. `node:crypto` imports public keys
 * only as SPKI, PEM or JWK, so the raw key Discord shows is wrapped rather than pulling in a library.
 */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Public keys seen recently, imported once: the same few keys are checked over and over. Bounded. */
const importedKeys = new Map<string, KeyObject | null>();
const MAX_IMPORTED_KEYS = 256;

/** The key object for a hex public key; `undefined` when it is not 32 bytes of hex or not a key. */
function importKey(hex: string): KeyObject | undefined {
  const known = importedKeys.get(hex);
  if (known !== undefined) return known ?? undefined;
  let key: KeyObject | null = null;
  if (PUBLIC_KEY_HEX.test(hex)) {
    try {
      key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
    } catch {
      key = null;
    }
  }
  if (importedKeys.size >= MAX_IMPORTED_KEYS) importedKeys.clear();
  importedKeys.set(hex, key);
  return key ?? undefined;
}

/**
 * True when the request carries a valid Ed25519 signature over `<timestamp><raw body>` by one of
 * `ctx.secrets` (hex public keys; several during a key rotation). Never throws on request content.
 */
export function verifyEd25519(params: Ed25519Params, ctx: VerifyContext): boolean {
  const read = readTimestampedBody(params, ctx.request);
  if (!read || read.signature.length !== SIGNATURE_BYTES) return false;
  for (const secret of ctx.secrets) {
    const key = importKey(secret.trim());
    // Ed25519 hashes internally, so the digest argument is null (RFC 8032 PureEdDSA).
    if (key && verifies(read.signed, key, read.signature)) return true;
  }
  return false;
}

function verifies(signed: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    return verify(null, signed, key, signature);
  } catch {
    return false; // OpenSSL refuses some malformed signatures by throwing rather than answering false
  }
}

/** Why a pasted Ed25519 public key would never verify; `undefined` when it is usable. */
export function checkEd25519Secret(secret: string): string | undefined {
  const hex = secret.trim();
  if (!PUBLIC_KEY_HEX.test(hex)) return 'an Ed25519 public key (Discord: the application\'s Public Key) is 64 hex characters';
  if (!importKey(hex)) return 'this is not a valid Ed25519 public key';
  return undefined;
}
