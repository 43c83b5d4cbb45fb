import { parseWebhookBody, type WebhookBody } from '../body.js';
import { checkBodyRule } from '../body-rule.js';
import type { HandshakeRequest } from '../handshakes.js';
import type { SenderRow } from '../senders/catalog-types.js';
import type { IncomingWebhook } from './types.js';

/**
 * Stage "read": a request's body, parsed once however many stages read it: the unsigned-handshake
 * check, the early handshakes, the flow input and a refusal's record may each need it, and a
 * multipart body is not cheap. Keyed by the content type it is read as (a row may read SNS's
 * `text/plain` as JSON).
 */
const parsedBodies = new WeakMap<IncomingWebhook, Map<string | undefined, Promise<WebhookBody>>>();
export function bodyOf(request: IncomingWebhook, contentType: string | undefined = request.headers['content-type']): Promise<WebhookBody> {
  let byType = parsedBodies.get(request);
  if (!byType) parsedBodies.set(request, (byType = new Map()));
  let parsed = byType.get(contentType);
  if (!parsed) byType.set(contentType, (parsed = parseWebhookBody(request.rawBody, contentType)));
  return parsed;
}

/** What a handshake looks at: the body parsed as JSON or a form when it is one. */
export async function handshakeRequestOf(request: IncomingWebhook, parsed?: WebhookBody, verifyTokenHash?: string): Promise<HandshakeRequest> {
  const body = parsed ?? (request.rawBody.length > 0 ? await bodyOf(request).catch(() => undefined) : undefined);
  return {
    method: request.method,
    headers: request.headers,
    query: request.query,
    rawBody: request.rawBody,
    json: body?.kind === 'json' ? body.value : undefined,
    ...(body?.kind === 'form' && { form: body.value }),
    ...(verifyTokenHash !== undefined && { verifyTokenHash }),
  };
}

/**
 * Stage "read", once the request verified: its body as its sender's row reads it (SNS's
 * `text/plain` as JSON), held to the row's body rule (415/400).
 */
export async function readBody(request: IncomingWebhook, row: SenderRow | undefined): Promise<WebhookBody> {
  const body = await bodyOf(request, row?.body_as === 'json' ? 'application/json' : undefined);
  if (row?.accepts) checkBodyRule(row.accepts, request.headers, body);
  return body;
}
