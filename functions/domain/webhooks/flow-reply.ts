import { isPlainObject } from '../../shared/json.js';
import type { ReplySummary } from '../flows/ports.js';

/**
 * A wait-mode flow may shape the answer its sender gets: an output in the form of an API Gateway
 * Lambda proxy response, `{"statusCode": n, "headers": {…}, "body": "…", "isBase64Encoded": bool}`,
 * is sent exactly as it says (TwiML for Twilio, text for a Slack command, bytes); any other output
 * is answered as JSON, as it always was. AWS users know the form from every Lambda behind API Gateway.
 */

/** An answer a flow shaped, checked and ready to send. */
export interface ShapedReply {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Text, or base64 when `isBase64Encoded`. */
  body: string;
  isBase64Encoded: boolean;
}


export type FlowReply =
  | { kind: 'json' }
  | { kind: 'shaped'; reply: ShapedReply }
  | { kind: 'malformed'; reason: string };

/** At most this many headers: enough for any sender's format, few enough to check cheaply. */
export const MAX_REPLY_HEADERS = 50;
/** The keys a proxy response may have; any other key means the output was not meant as one. */
const PROXY_RESPONSE_KEYS = new Set(['statusCode', 'headers', 'body', 'isBase64Encoded']);
/** RFC 9110 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** Visible ASCII, spaces and tabs, and bytes above 0x7F (obs-text): no CR, LF or other control byte. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]{0,4096}$/;
/**
 * Headers a flow may not set. Hop-by-hop ones (RFC 9110 section 7.6.1) and the framing ones are
 * API Gateway's and the connection's business: a wrong `Content-Length` would corrupt the
 * response. `Set-Cookie` is refused too: a sender is a server that keeps no cookies, and a cookie
 * set on the gateway's domain would reach the console's users, who share that origin.
 */
const FORBIDDEN_HEADERS = new Set([
  'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer',
  'proxy-authenticate', 'proxy-authorization', 'set-cookie',
]);
/** Strict padded base64, as `isBase64Encoded` bodies must be. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The rules a flow's reply is held to, for any other answer a sender gets through the receiver (a
 * listener's, `domain/listen/hub.ts`): a header the receiver may not pass on (hop-by-hop, framing,
 * `Set-Cookie`), a header name or value HTTP does not allow, a body that is not base64 though said to be.
 */
export const replyRules = {
  forbidsHeader: (lowerName: string) => FORBIDDEN_HEADERS.has(lowerName),
  isHeaderName: (name: string) => HEADER_NAME.test(name),
  isHeaderValue: (value: string) => HEADER_VALUE.test(value),
  isBase64: (body: string) => BASE64.test(body),
};

/**
 * How a wait-mode flow's output is answered. An object with a `statusCode` key and no key a proxy
 * response lacks is meant as a response: it is checked, and one that breaks a rule is `malformed`
 * (the receiver answers 502 `flow_failed` with the reason on the execution's timeline). A body is
 * at most what a flow's output can hold (Step Functions' 256 KiB), well within Lambda's 6 MB
 * response and API Gateway's 10 MB.
 */
export function replyFromFlowOutput(output: unknown): FlowReply {
  if (!isPlainObject(output) || !Object.hasOwn(output, 'statusCode')) return { kind: 'json' };
  if (Object.keys(output).some((key) => !PROXY_RESPONSE_KEYS.has(key))) return { kind: 'json' };
  const { statusCode, headers = {}, body = '', isBase64Encoded = false } = output as Record<string, unknown>;
  const malformed = (reason: string): FlowReply => ({ kind: 'malformed', reason: `the flow's reply ${reason}` });
  if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 200 || statusCode > 599) {
    return malformed('statusCode must be an integer from 200 to 599');
  }
  if (!isPlainObject(headers)) return malformed('headers must be an object of names to text');
  const entries = Object.entries(headers);
  if (entries.length > MAX_REPLY_HEADERS) return malformed(`has more than ${MAX_REPLY_HEADERS} headers`);
  const checked: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) return malformed(`header name ${JSON.stringify(name.slice(0, 40))} is not an HTTP token`);
    const lower = name.toLowerCase();
    if (FORBIDDEN_HEADERS.has(lower)) return malformed(`may not set ${lower}`);
    if (typeof value !== 'string' || !HEADER_VALUE.test(value)) return malformed(`header ${lower} must be text without control characters, at most 4096 characters`);
    checked[lower] = value;
  }
  if (typeof isBase64Encoded !== 'boolean') return malformed('isBase64Encoded must be true or false');
  if (typeof body !== 'string') return malformed('body must be a string (base64 with isBase64Encoded for bytes)');
  if (isBase64Encoded && !BASE64.test(body)) return malformed('body is not base64, though isBase64Encoded is true');
  if ((statusCode === 204 || statusCode === 304) && body !== '') return malformed(`${statusCode} may not have a body`);
  return { kind: 'shaped', reply: { status: statusCode, headers: checked, body, isBase64Encoded } };
}

/** What an execution keeps of a shaped reply. */
export function summarizeReply(reply: ShapedReply): ReplySummary {
  const bytes = reply.isBase64Encoded ? Buffer.from(reply.body, 'base64').length : Buffer.byteLength(reply.body);
  return { status: reply.status, ...(reply.headers['content-type'] !== undefined && { content_type: reply.headers['content-type'] }), bytes };
}
