import type { RandomBytes } from '../random-bytes.js';

/*
 * A trigger's webhook id and public URL. Kept apart from the trigger's validation so the
 * receiver's bundle does not carry the schema library.
 */

/** At least 128 random bits, as the URL is the trigger's first line of defence: 192 here. */
export const newWebhookId = (randomBytes: RandomBytes): string => Buffer.from(randomBytes(24)).toString('base64url');
/** What `newWebhookId` makes: 24 bytes in base64url. */
export const WEBHOOK_ID = /^[A-Za-z0-9_-]{32}$/;

/** A trigger's public URL: `<base>/<webhook id>`. */
export const webhookUrl = (webhookBaseUrl: string, webhookId: string): string => `${webhookBaseUrl.replace(/\/+$/, '')}/${webhookId}`;
