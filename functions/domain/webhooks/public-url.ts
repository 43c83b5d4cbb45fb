import { webhookUrl } from '../triggers/webhook-url.js';

/**
 * The URL the sender called, which URL-signing senders sign (Twilio, Square, HubSpot v3): the
 * trigger's URL as its owner was shown it (under the configured public base URL: the custom
 * domain's, or the stack's own API URL) with the query as sent. Never rebuilt from `Host` or
 * `X-Forwarded-*`: those are the caller's to write, and a URL the caller chooses would let a
 * signature made for another host (another receiver of the same sender, with the same key) pass here.
 */
export function publicRequestUrl(publicBaseUrl: string, webhookId: string, rawQueryString: string): string {
  return `${webhookUrl(publicBaseUrl, webhookId)}${rawQueryString ? `?${rawQueryString}` : ''}`;
}
