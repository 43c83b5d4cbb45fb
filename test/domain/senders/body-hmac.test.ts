import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JSON_BODY, proveHmacSender, rowOf, verifySent } from '../../support/sender-proof.js';

/*
 * Senders that sign the raw body with an HMAC and publish no library that verifies it: each
 * request is built from the sender's own documentation, cited beside it, independently of the
 * catalog's row (the header, prefix, algorithm and encoding are written out here again).
 */
interface Documented {
  id: string;
  /** Where the sender documents the scheme. */
  docs: string;
  header: string;
  sign(secret: string, body: string): string;
  secret?: string;
  otherSecret?: string;
}

const hmacOf = (algorithm: 'sha1' | 'sha256', key: string | Buffer, body: string, encoding: 'hex' | 'base64') =>
  createHmac(algorithm, key).update(body).digest(encoding);

const DOCUMENTED: Documented[] = [
  // https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/#Secure-webhooks
  { id: 'bitbucket', docs: 'support.atlassian.com (Bitbucket Cloud: secure webhooks)', header: 'X-Hub-Signature', sign: (s, b) => `sha256=${hmacOf('sha256', s, b, 'hex')}` },
  // https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks (base64 HMAC-SHA256 of the payload)
  { id: 'woocommerce', docs: 'woocommerce.github.io (REST API: webhooks)', header: 'X-WC-Webhook-Signature', sign: (s, b) => hmacOf('sha256', s, b, 'base64') },
  // https://docs.lemonsqueezy.com/help/webhooks/signing-requests
  { id: 'lemon_squeezy', docs: 'docs.lemonsqueezy.com (signing requests)', header: 'X-Signature', sign: (s, b) => hmacOf('sha256', s, b, 'hex') },
  // https://docs.mollie.com/reference/webhooks-best-practices (next-gen webhooks)
  { id: 'mollie', docs: 'docs.mollie.com (webhooks best practices)', header: 'X-Mollie-Signature', sign: (s, b) => hmacOf('sha256', s, b, 'hex') },
  // https://docs.cdp.coinbase.com/commerce/docs/webhooks-security
  { id: 'coinbase_commerce', docs: 'docs.cdp.coinbase.com (Commerce webhooks security)', header: 'X-CC-Webhook-Signature', sign: (s, b) => hmacOf('sha256', s, b, 'hex') },
  // https://www.typeform.com/developers/webhooks/secure-your-webhooks/
  { id: 'typeform', docs: 'typeform.com/developers (secure your webhooks)', header: 'Typeform-Signature', sign: (s, b) => `sha256=${hmacOf('sha256', s, b, 'base64')}` },
  // https://developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications
  { id: 'intercom', docs: 'developers.intercom.com (signed notifications)', header: 'X-Hub-Signature', sign: (s, b) => `sha1=${hmacOf('sha1', s, b, 'hex')}` },
  // https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks
  { id: 'jira', docs: 'developer.atlassian.com (Jira: secure admin webhooks)', header: 'X-Hub-Signature', sign: (s, b) => `sha256=${hmacOf('sha256', s, b, 'hex')}` },
  // https://developers.asana.com/docs/webhooks-guide#security
  { id: 'asana', docs: 'developers.asana.com (webhooks: security)', header: 'X-Hook-Signature', sign: (s, b) => hmacOf('sha256', s, b, 'hex') },
  // https://developers.notion.com/reference/webhooks#step-3-validating-event-payloads-recommended
  { id: 'notion', docs: 'developers.notion.com (validating event payloads)', header: 'X-Notion-Signature', sign: (s, b) => `sha256=${hmacOf('sha256', s, b, 'hex')}` },
  // https://airtable.com/developers/web/api/webhooks-overview (key: the base64-decoded macSecretBase64)
  {
    id: 'airtable',
    docs: 'airtable.com/developers (webhooks overview)',
    header: 'X-Airtable-Content-MAC',
    sign: (s, b) => `hmac-sha256=${hmacOf('sha256', Buffer.from(s, 'base64'), b, 'hex')}`,
    secret: Buffer.from('airtable-mac-secret-one-32-bytes').toString('base64'),
    otherSecret: Buffer.from('airtable-mac-secret-two-32-bytes').toString('base64'),
  },
  // https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks
  { id: 'vercel', docs: 'vercel.com/docs (securing webhooks)', header: 'x-vercel-signature', sign: (s, b) => hmacOf('sha1', s, b, 'hex') },
  // https://docs.sentry.io/organization/integrations/integration-platform/webhooks/#sentry-hook-signature
  { id: 'sentry', docs: 'docs.sentry.io (Sentry-Hook-Signature)', header: 'Sentry-Hook-Signature', sign: (s, b) => hmacOf('sha256', s, b, 'hex') },
  // https://developer.pagerduty.com/docs/webhooks-overview#verifying-signatures (`v1=` items, comma-separated)
  { id: 'pagerduty', docs: 'developer.pagerduty.com (verifying signatures)', header: 'X-PagerDuty-Signature', sign: (s, b) => `v1=${hmacOf('sha256', s, b, 'hex')}` },
  // https://developers.docusign.com/platform/webhooks/connect/validate/ (one header per active key)
  { id: 'docusign', docs: 'developers.docusign.com (Connect HMAC)', header: 'X-DocuSign-Signature-1', sign: (s, b) => hmacOf('sha256', s, b, 'base64') },
  // https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads
  { id: 'meta', docs: 'developers.facebook.com (validate payloads)', header: 'X-Hub-Signature-256', sign: (s, b) => `sha256=${hmacOf('sha256', s, b, 'hex')}` },
  // https://www.dropbox.com/developers/reference/webhooks#notifications
  { id: 'dropbox', docs: 'dropbox.com/developers (webhooks: notifications)', header: 'X-Dropbox-Signature', sign: (s, b) => hmacOf('sha256', s, b, 'hex') },
  // https://docs.x.com/x-api/webhooks/introduction#validating-the-signature-header
  { id: 'x', docs: 'docs.x.com (validating the signature header)', header: 'x-twitter-webhooks-signature', sign: (s, b) => `sha256=${hmacOf('sha256', s, b, 'base64')}` },
];

for (const sender of DOCUMENTED) {
  proveHmacSender(sender.id, {
    secret: sender.secret ?? `${sender.id}-secret-one`,
    otherSecret: sender.otherSecret ?? `${sender.id}-secret-two`,
    sign: (secret) => ({ body: JSON_BODY, headers: { [sender.header]: sender.sign(secret, JSON_BODY) } }),
  });
}

describe('pagerduty (PagerDuty) several signatures', () => {
  it('verifySender(pagerduty) returns true when the matching v1 is the second of the list', async () => {
    const header = `v1=${'0'.repeat(64)},v1=${hmacOf('sha256', 'pd', JSON_BODY, 'hex')}`;
    expect(await verifySent(rowOf('pagerduty'), { body: JSON_BODY, headers: { 'x-pagerduty-signature': header } }, ['pd'])).toBe(true);
  });
});

describe('docusign (DocuSign Connect) one header per key', () => {
  it('verifySender(docusign) returns true when the key signed X-DocuSign-Signature-2', async () => {
    const headers = { 'x-docusign-signature-1': hmacOf('sha256', 'old-key', JSON_BODY, 'base64'), 'x-docusign-signature-2': hmacOf('sha256', 'new-key', JSON_BODY, 'base64') };
    expect(await verifySent(rowOf('docusign'), { body: JSON_BODY, headers }, ['new-key'])).toBe(true);
  });

  it('verifySender(docusign) ignores a header that only looks numbered', async () => {
    const headers = { 'x-docusign-signature-x': hmacOf('sha256', 'key', JSON_BODY, 'base64') };
    expect(await verifySent(rowOf('docusign'), { body: JSON_BODY, headers }, ['key'])).toBe(false);
  });
});
