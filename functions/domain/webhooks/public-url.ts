import { webhookUrl } from '../triggers/webhook-url.js';

/**
 * The URL the sender called, which URL-signing senders sign (Twilio, Square, HubSpot v3): the
 * trigger's URL under the base of the door the request came through (`received-on.ts`: the custom
 * domain's, the function URL's or the API's own) with the query as sent. Never rebuilt from `Host`
 * or `X-Forwarded-*`: those are the caller's to write, and a URL the caller chooses would let a
 * signature made for another host (another receiver of the same sender, with the same key) pass here.
 */
export function publicRequestUrl(publicBaseUrl: string, webhookId: string, rawQueryString: string): string {
  return `${webhookUrl(publicBaseUrl, webhookId)}${rawQueryString ? `?${rawQueryString}` : ''}`;
}
