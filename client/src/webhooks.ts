/**
 * `@flowgate/client/webhooks` (Node): signs a request exactly as a sender would, from the product's
 * own sender catalog, so a test suite can post a signed event to a trigger. Nothing of a sender's
 * scheme is written here: the catalog row says what is signed, how and where (the receiver's
 * reading of it assembles the signed content), and every signature is checked by the receiver's
 * own verifier before it is returned.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { customRow, senderRow, CHOOSABLE_SENDER_IDS } from '../../functions/domain/webhooks/senders/catalog.js';
import type { HmacParams, SenderRow, Verification } from '../../functions/domain/webhooks/senders/catalog-types.js';
import { keyBytes, signedContent } from '../../functions/domain/webhooks/senders/primitives/hmac.js';
import { verifySender } from '../../functions/domain/webhooks/senders/verify.js';

export interface SignOptions {
  /** Unix seconds the signature is made at (default now); the receiver takes it within the sender's tolerance. */
  timestamp?: number;
  /** The webhook URL the request goes to: senders that sign it (Square, HubSpot, Twilio) need it. */
  url?: string;
  /** Headers the request carries besides the signature (an event type header, say); names any case. */
  headers?: Record<string, string>;
  /** The request's content type (default `application/json`). */
  contentType?: string;
  /** For `custom`: the trigger's `signature.custom` settings. */
  custom?: unknown;
}

export interface SignedWebhook {
  /** Every header to send, signature included, names in lower case. */
  headers: Record<string, string>;
  /** The body, as bytes: send exactly these. */
  body: Uint8Array;
}

/** The senders `sign` can sign as with a secret alone (those that sign with their own private key cannot). */
export const SIGNABLE_SENDERS: readonly string[] = CHOOSABLE_SENDER_IDS.filter((id) => {
  const row = senderRow(id);
  return row !== undefined && (row.id === 'custom' || signableWith(row.verification));
});

function signableWith(verification: Verification): boolean {
  switch (verification.primitive) {
    case 'hmac':
      return verification.signature.from === 'header' || verification.signature.from === 'numbered_headers';
    case 'static_token':
      return verification.location !== 'body_items';
    case 'basic':
      return true;
    case 'any_of':
      return verification.schemes.some(signableWith);
    default:
      return false;
  }
}

/**
 * The headers `sender` sends with `body` when its secret is `secret`. Rejects with a `TypeError`
 * for an unknown sender, a sender that signs with its private key (Discord, SendGrid, PayPal, …),
 * or a request the sender's scheme cannot sign as given (a signed URL without `url`, a body
 * without the field the sender signs).
 */
export async function sign(sender: string, secret: string, body: string | Uint8Array, options: SignOptions = {}): Promise<SignedWebhook> {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('webhooks.sign: a secret is required');
  const row = sender === 'custom' ? (options.custom === undefined ? undefined : customRow(options.custom as HmacParams)) : senderRow(sender);
  if (!row) {
    const why = sender === 'custom' ? 'custom needs its settings as options.custom' : `unknown sender "${sender}"`;
    throw new TypeError(`webhooks.sign: ${why}; senders: ${SIGNABLE_SENDERS.join(', ')}`);
  }
  const rawBody = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const base: Record<string, string> = { 'content-type': options.contentType ?? 'application/json' };
  for (const [name, value] of Object.entries(options.headers ?? {})) base[name.toLowerCase()] = value;
  // An unsigned delivery id in a header (GitHub's `x-github-delivery`) is sent as the sender sends one.
  if (row.delivery_id?.from === 'header') base[row.delivery_id.name] ??= randomUUID();
  const request = (headers: Record<string, string>) => ({ rawBody, headers, url: options.url ?? '', nowSeconds: timestamp });

  const schemes = row.verification.primitive === 'any_of' ? row.verification.schemes : [row.verification];
  let reason = `${row.name} signs with a key of its own (${row.verification.primitive}): a secret cannot sign as it`;
  for (const scheme of schemes) {
    if (!signableWith(scheme)) continue;
    const headers = signWith(scheme, secret, { ...base }, request, timestamp);
    if (!headers) {
      reason = `${row.name}: the request lacks what the sender signs (${describeContent(scheme)})`;
      continue;
    }
    // The receiver's own verifier decides: what it does not accept is never handed out.
    const ctx = { request: request(headers), secrets: [secret], method: 'POST', keys: { fetchText: () => Promise.reject(new Error('no keys here')) } };
    if (await verifySender(row as SenderRow, ctx)) return { headers, body: rawBody };
    reason = `${row.name}: the signed request does not verify (${describeContent(scheme)}; is the secret in the sender's format?)`;
  }
  throw new TypeError(`webhooks.sign: ${reason}`);
}

function describeContent(scheme: Verification): string {
  if (scheme.primitive !== 'hmac') return scheme.primitive;
  if (!Array.isArray(scheme.content)) return 'signs the URL and the fields of a form body: pass options.url, and a form body (another body is bound by ?bodySHA256=<hex SHA-256 of the body> in the URL)';
  return `signs ${scheme.content.map((part) => (part.part === 'json' ? `the body's ${part.path.join('.')}` : part.part === 'header' ? `header ${part.name}` : part.part)).join(' + ')}`;
}

type RequestOf = (headers: Record<string, string>) => { rawBody: Uint8Array; headers: Record<string, string>; url: string; nowSeconds: number };

/** The request's headers with the scheme's credential added, or `undefined` when it cannot be made. */
function signWith(scheme: Verification, secret: string, headers: Record<string, string>, request: RequestOf, timestamp: number): Record<string, string> | undefined {
  switch (scheme.primitive) {
    case 'static_token':
      if (scheme.location === 'header') headers[scheme.header] = scheme.scheme ? `${scheme.scheme} ${secret}` : secret;
      else if (scheme.location === 'named_header') {
        const at = secret.indexOf(':');
        if (at <= 0) return undefined;
        headers[secret.slice(0, at).trim().toLowerCase()] = secret.slice(at + 1).trim();
      }
      return headers;
    case 'basic':
      headers[scheme.header ?? 'authorization'] = `Basic ${btoa(secret)}`;
      return headers;
    case 'hmac':
      return signHmac(scheme, secret, headers, request, timestamp);
    default:
      return undefined;
  }
}

function timestampText(format: NonNullable<HmacParams['timestamp']>['format'], seconds: number): string {
  return format === 'unix_milliseconds' ? String(seconds * 1000) : format === 'rfc3339' ? new Date(seconds * 1000).toISOString() : String(seconds);
}

function signHmac(params: HmacParams, secret: string, headers: Record<string, string>, request: RequestOf, timestamp: number): Record<string, string> | undefined {
  const source = params.signature;
  if (source.from !== 'header' && source.from !== 'numbered_headers') return undefined;
  const list = source.from === 'header' ? source.list : undefined;
  const prefix = source.from === 'header' ? (source.prefix ?? '') : '';
  const name = source.from === 'header' ? source.name : `${source.name_prefix}1`;
  let stamp = '';
  if (params.timestamp) {
    const at = params.timestamp.source;
    stamp = timestampText(params.timestamp.format, timestamp);
    if (at.from === 'header') headers[at.name] ??= stamp;
  }
  // Each signed header the caller did not give (Svix's `svix-id`, Twitch's message id) is an id of the delivery.
  if (Array.isArray(params.content)) {
    for (const part of params.content) if (part.part === 'header') headers[part.name] ??= `msg_${randomUUID().replaceAll('-', '')}`;
  }
  // A timestamp carried in the signature's own list (Stripe's `t=`) is read from it: put it there first.
  const listStamp = list && params.timestamp?.source.from === 'signature_list' ? `${params.timestamp.source.key}${list.assign}${stamp}` : undefined;
  if (listStamp) headers[name] = `${prefix}${listStamp}`;
  const content = signedContent(params, { request: request(headers), secrets: [secret], method: 'POST' });
  const key = keyBytes(params.key, secret);
  if (!content || !key || key.length === 0) return undefined;
  const mac = createHmac(params.algorithm, key);
  for (const part of content) mac.update(part);
  const digest = mac.digest(params.encoding);
  const signature = list ? `${list.key ?? 'v1'}${list.assign}${digest}` : digest;
  headers[name] = `${prefix}${listStamp ? `${listStamp}${list!.separator}` : ''}${signature}`;
  return headers;
}
