// Slack signs `v0:<timestamp>:<raw body>`: https://api.slack.com/authentication/verifying-requests-from-slack
import { headerValue } from '../headers.js';
import { anySignatureMatches, decodeSignature, hmac } from './hmac.js';
import { isFreshTimestamp, type SignedRequest } from './request.js';

/** Slack recommends refusing requests more than five minutes from local time. */
export const SLACK_TOLERANCE_SECONDS = 300;

const VERSION = 'v0';

/** Verifies `x-slack-signature: v0=<hex>` against `x-slack-request-timestamp` and the raw body. */
export function verifySlack(secrets: readonly string[], request: SignedRequest): boolean {
  const header = headerValue(request.headers, 'x-slack-signature');
  const timestamp = headerValue(request.headers, 'x-slack-request-timestamp');
  if (!header?.startsWith(`${VERSION}=`) || timestamp === undefined) return false;
  if (!isFreshTimestamp(timestamp, request.nowSeconds, SLACK_TOLERANCE_SECONDS)) return false;
  const signature = decodeSignature(header.slice(VERSION.length + 1), 'hex');
  if (!signature) return false;
  const signedPrefix = `${VERSION}:${timestamp}:`;
  return anySignatureMatches(secrets, [signature], (secret) => hmac('sha256', secret, signedPrefix, request.rawBody));
}
