import { headerValue } from '../../headers.js';
import { decodeSignature, type SignatureEncoding } from '../../signatures/hmac.js';
import { isFreshTimestamp, isTimestampWithin, type SignedRequest } from '../../signatures/request.js';

/** Where a sender that signs `<timestamp header><raw body>` puts its signature and timestamp. */
export interface TimestampedBodyParams {
  /** Lower-case name of the header carrying the signature. */
  signatureHeader: string;
  signatureEncoding: SignatureEncoding;
  /** Lower-case name of the header carrying the signed unix time in seconds. */
  timestampHeader: string;
  /**
   * Refuse a signed timestamp further than this from now, either way. Optional because neither
   * Discord nor SendGrid document one; without any window a captured request can be replayed.
   */
  toleranceSeconds?: number;
  /** When set, how old the signed timestamp may be instead (`toleranceSeconds` still bounds how far ahead). */
  maxAgeSeconds?: number;
}

/** The decoded signature and the signed bytes (`timestamp + body`); `undefined` when a header is missing, malformed or stale. */
export function readTimestampedBody(
  params: TimestampedBodyParams,
  request: SignedRequest,
): { signature: Buffer; signed: Buffer } | undefined {
  const signatureText = headerValue(request.headers, params.signatureHeader);
  const timestamp = headerValue(request.headers, params.timestampHeader);
  if (signatureText === undefined || timestamp === undefined) return undefined;
  if (params.maxAgeSeconds !== undefined) {
    const window = { pastSeconds: params.maxAgeSeconds, futureSeconds: params.toleranceSeconds ?? Infinity };
    if (!isTimestampWithin(timestamp, request.nowSeconds, window)) return undefined;
  } else if (params.toleranceSeconds !== undefined && !isFreshTimestamp(timestamp, request.nowSeconds, params.toleranceSeconds)) {
    return undefined;
  }
  const signature = decodeSignature(signatureText, params.signatureEncoding);
  if (!signature) return undefined;
  // The timestamp is taken as the sender sent it (after trimming), byte for byte, as both senders sign it.
  return { signature, signed: Buffer.concat([Buffer.from(timestamp, 'utf8'), request.rawBody]) };
}
