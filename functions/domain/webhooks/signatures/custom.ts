// A configurable HMAC for senders without a dedicated verifier; no single sender documents it.
// It generalises GitHub's prefixed header (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries)
// and Stripe's `<timestamp>.<body>` content (https://docs.stripe.com/webhooks#verify-manually).
import { headerValue } from '../headers.js';
import { anySignatureMatches, decodeSignature, hmac, type HmacAlgorithm, type SignatureEncoding } from './hmac.js';
import { isFreshTimestamp, type SignedRequest } from './request.js';

/** Tolerance, either way, when the custom scheme carries a timestamp header. */
export const CUSTOM_TOLERANCE_SECONDS = 300;

/** How a custom sender signs: which header, which HMAC, how the digest is written. */
export interface CustomSignatureConfig {
  algorithm: HmacAlgorithm;
  /** Header carrying the signature; matched case-insensitively. */
  header: string;
  encoding: SignatureEncoding;
  /** Text before the digest, e.g. `sha256=`; required when set. */
  prefix?: string;
  /** Header with unix seconds; when set, the signed content is `<timestamp>.<raw body>`. */
  timestamp_header?: string;
}

/** Verifies a request signed as `config` describes. */
export function verifyCustom(config: CustomSignatureConfig, secrets: readonly string[], request: SignedRequest): boolean {
  const header = headerValue(request.headers, config.header.toLowerCase());
  const prefix = config.prefix ?? '';
  if (!header?.startsWith(prefix)) return false;
  const signature = decodeSignature(header.slice(prefix.length), config.encoding);
  if (!signature) return false;
  let signedPrefix = '';
  if (config.timestamp_header !== undefined) {
    const timestamp = headerValue(request.headers, config.timestamp_header.toLowerCase());
    if (timestamp === undefined || !isFreshTimestamp(timestamp, request.nowSeconds, CUSTOM_TOLERANCE_SECONDS)) return false;
    signedPrefix = `${timestamp}.`;
  }
  return anySignatureMatches(secrets, [signature], (secret) => hmac(config.algorithm, secret, signedPrefix, request.rawBody));
}
