import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SenderCategory } from '../../../functions/domain/webhooks/senders/catalog-types.js';
import { SENDERS } from '../../../functions/domain/webhooks/senders/catalog.js';
import { validateHmacParams } from '../../../functions/domain/webhooks/senders/primitives/hmac-params.js';

/** The ids of shared/senders.md, in its order (checked against the file itself where it is beside the repository). */
const SENDERS_MD_IDS = [
  'stripe', 'github', 'gitlab', 'bitbucket', 'slack', 'discord', 'shopify', 'woocommerce', 'bigcommerce', 'twilio',
  'sendgrid', 'mailgun', 'postmark', 'resend', 'clerk', 'svix', 'paddle', 'lemon_squeezy', 'paypal', 'square',
  'braintree', 'adyen', 'mollie', 'razorpay', 'coinbase_commerce', 'plaid', 'zoom', 'twitch', 'microsoft_graph', 'google_pubsub',
  'aws_sns', 'calendly', 'typeform', 'hubspot', 'intercom', 'linear', 'jira', 'asana', 'notion', 'airtable',
  'vercel', 'netlify', 'sentry', 'pagerduty', 'zendesk', 'docusign', 'okta', 'auth0', 'meta', 'telegram',
  'dropbox', 'x',
];
const SENDERS_MD = resolve(import.meta.dirname, '../../../../shared/senders.md');
const CATEGORIES: readonly SenderCategory[] = ['payments', 'code hosting', 'messaging', 'e-commerce', 'telecom', 'email', 'identity', 'productivity', 'monitoring', 'cloud', 'custom'];

/**
 * The rows proven by a proof file: a file of test/domain/senders/ (this folder's top level) that
 * exercises the senders code and names the row's id as a string literal, as
 * `proveHmacSender('stripe', …)` or `senderRow('discord')` do. A file written on another branch
 * counts the same way when it lands, without a change here.
 */
function provenIds(): Set<string> {
  const proven = new Set<string>();
  for (const file of readdirSync(import.meta.dirname)) {
    if (!file.endsWith('.test.ts') || file === 'catalog.test.ts') continue;
    const source = readFileSync(join(import.meta.dirname, file), 'utf8');
    if (!source.includes('sender-proof') && !source.includes('webhooks/senders/')) continue;
    for (const row of SENDERS) if (new RegExp(`['"\`]${row.id}['"\`]`).test(source)) proven.add(row.id);
  }
  return proven;
}

describe('sender catalog', () => {
  it('has a row for every id of shared/senders.md, then standard_webhooks and custom, each once', () => {
    if (existsSync(SENDERS_MD)) {
      const table = readFileSync(SENDERS_MD, 'utf8');
      const fromFile = [...table.matchAll(/^\| (`[a-z0-9_]+`(?:, `[a-z0-9_]+`)*) \|/gm)].flatMap((m) => m[1]!.split(', ').map((id) => id.slice(1, -1)));
      expect(fromFile).toEqual(SENDERS_MD_IDS);
    }
    expect(SENDERS.map((row) => row.id)).toEqual([...SENDERS_MD_IDS, 'standard_webhooks', 'custom']);
  });

  it('gives every row a name, a category, an https docs link and a secret label', () => {
    for (const row of SENDERS) {
      expect(row.name, row.id).not.toBe('');
      expect(CATEGORIES, row.id).toContain(row.category);
      expect(new URL(row.docs_url).protocol, row.id).toBe('https:');
      expect(row.secret_label, row.id).not.toBe('');
    }
  });

  it('states every HMAC row as parameters a custom configuration could give too', () => {
    for (const row of SENDERS) {
      if (row.verification.primitive !== 'hmac') continue;
      const { primitive: _hmac, ...params } = row.verification;
      const check = validateHmacParams(JSON.parse(JSON.stringify(params)));
      expect(check.ok ? 'valid' : check.message, row.id).toBe('valid');
    }
  });

  it('marks the handshake column of shared/senders.md', () => {
    const withHandshake = SENDERS.filter((row) => row.handshake).map((row) => row.id);
    expect(withHandshake).toEqual([
      'slack', 'discord', 'woocommerce', 'twilio', 'adyen', 'zoom', 'twitch', 'microsoft_graph', 'aws_sns',
      'intercom', 'asana', 'notion', 'okta', 'meta', 'dropbox', 'x',
    ]);
  });

  it('lists at least 48 of the senders as supported, and says why for each one that is not', () => {
    const unsupported = SENDERS.filter((row) => row.verification.primitive === 'unsupported');
    for (const row of unsupported) expect(row.verification.primitive === 'unsupported' && row.verification.reason.length > 20, row.id).toBe(true);
    expect(SENDERS_MD_IDS.length - unsupported.filter((row) => SENDERS_MD_IDS.includes(row.id)).length).toBeGreaterThanOrEqual(48);
    expect(unsupported.map((row) => row.id)).toEqual(['plaid']);
  });

  it('has a proof for every row that is not unsupported or configured', () => {
    const proven = provenIds();
    // `custom` (configured) is proven through customRow with settings; an unsupported row verifies nothing.
    const needProof = SENDERS.filter((row) => row.verification.primitive !== 'unsupported' && row.verification.primitive !== 'configured');
    expect(needProof.filter((row) => !proven.has(row.id)).map((row) => row.id)).toEqual([]);
    expect(needProof.filter((row) => proven.has(row.id)).length).toBe(needProof.length);
    const rest = SENDERS.filter((row) => !needProof.includes(row)).map((row) => `${row.id} (${row.verification.primitive})`);
    console.info(`sender proofs: ${needProof.length} of ${SENDERS.length} rows proven; without a row proof: ${rest.join(', ')}`);
  });
});
