// A configurable HMAC for senders without a dedicated row; no single sender documents it.
// It generalises GitHub's prefixed header (https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries)
// and Stripe's `<timestamp>.<body>` content (https://docs.stripe.com/webhooks#verify-manually).
// Verified by the sender catalog's HMAC primitive (`hmacParamsFromCustomConfig` in senders/catalog.ts).
import type { HmacAlgorithm, SignatureEncoding } from './hmac.js';

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
