/**
 * A trigger's public URL. Kept apart from the trigger's validation so the receiver's bundle does
 * not carry the schema library.
 */
export const webhookUrl = (webhookBaseUrl: string, webhookId: string): string => `${webhookBaseUrl.replace(/\/+$/, '')}/${webhookId}`;
