import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { GENERATED, generatedEventNames } from '../../../bin/event-names.js';
import { SENDERS } from '../../../functions/domain/webhooks/senders/catalog.js';
import { SENDERS_WITH_EVENT_NAMES } from '../../../functions/domain/webhooks/senders/event-names.js';
import { SIGNATURE_SERVICE_LISTING } from '../../../functions/domain/webhooks/senders/listing.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const listed = (id: string) => SIGNATURE_SERVICE_LISTING.services.find((service) => service.id === id)!;

describe('the listing\'s delivery time-out and retries (GET /signature-services)', () => {
  it('every sender says how long it waits and how it retries: a number of seconds, or null where its documentation does not say', () => {
    for (const { id, delivery_policy: policy } of SIGNATURE_SERVICE_LISTING.services) {
      expect(policy.timeout_seconds === null || (Number.isInteger(policy.timeout_seconds) && policy.timeout_seconds > 0), id).toBe(true);
      expect(policy.retry_window_seconds === null || (Number.isInteger(policy.retry_window_seconds) && policy.retry_window_seconds >= 0), id).toBe(true);
      expect(policy.retries, id).toMatch(/\w{3,}.*\.$/);
    }
  });

  it('Slack, Zoom, Discord, Microsoft Graph and Okta wait 3 s; GitHub 10 s and never retries by itself; Svix 15 s, retrying for about 27.6 h', () => {
    for (const id of ['slack', 'zoom', 'discord', 'microsoft_graph', 'okta']) expect(listed(id).delivery_policy.timeout_seconds, id).toBe(3);
    expect(listed('github').delivery_policy).toMatchObject({ timeout_seconds: 10, retry_window_seconds: 0 });
    expect(listed('svix').delivery_policy).toMatchObject({ timeout_seconds: 15, retry_window_seconds: 99_305 });
    expect(listed('slack').delivery_policy.retry_window_seconds).toBe(6 * 60);
  });

  it('"undocumented" is null, and a figure from a secondary source is marked unconfirmed', () => {
    expect(listed('braintree').delivery_policy).toEqual({ timeout_seconds: null, retry_window_seconds: null, retries: 'Undocumented.' });
    expect(listed('hubspot').delivery_policy).toMatchObject({ timeout_seconds: 5, unconfirmed: true });
    expect(listed('slack').delivery_policy.unconfirmed).toBeUndefined();
  });
});

describe('the listing\'s event names', () => {
  it('GitHub\'s come from @octokit/webhooks-types and Stripe\'s from the stripe package, as their deliveries write them', () => {
    expect(listed('github').event_names).toMatchObject({ source: '@octokit/webhooks-types (WebhookEventName)', names: expect.arrayContaining(['push', 'pull_request', 'issues', 'workflow_run']) });
    expect(listed('stripe').event_names).toMatchObject({ source: 'stripe (Stripe.Event.Type)', names: expect.arrayContaining(['payment_intent.succeeded', 'invoice.paid']) });
    expect(listed('stripe').event_names!.names.length).toBeGreaterThan(200);
    expect(listed('paddle').event_names?.names).toContain('transaction.completed');
  });

  it('elsewhere the names the sender\'s documentation shows; none for a sender whose deliveries carry no type', () => {
    expect(listed('typeform').event_names).toEqual({ names: ['form_response', 'form_response_partial'], source: 'the sender\'s documentation (examples)' });
    expect(listed('aws_sns').event_names).toBeNull();
  });

  it('each row\'s example type is among its names, and every sender the names are kept for is a catalog row', () => {
    for (const row of SENDERS) {
      const names = listed(row.id)?.event_names?.names;
      if (names && 'example' in row.event_type) expect(names, row.id).toContain(row.event_type.example);
    }
    const ids = new Set(SENDERS.map((row) => row.id));
    for (const id of SENDERS_WITH_EVENT_NAMES) expect(ids.has(id), id).toBe(true);
    expect(new Set(SENDERS_WITH_EVENT_NAMES).size).toBe(SENDERS_WITH_EVENT_NAMES.length);
  });

  it('event-names.generated.ts is what `npm run docs:event-names` writes from the installed packages', () => {
    expect(readFileSync(GENERATED, 'utf8')).toBe(generatedEventNames());
  }, 60_000);

  it('the webhook receiver\'s bundle carries no name list: only the listing imports them', async () => {
    const result = await build({ entryPoints: [resolve(ROOT, 'functions/entries/webhook.ts')], bundle: true, write: false, metafile: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'silent' });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((path) => path.includes('senders/catalog.ts'))).toBe(true);
    expect(inputs.filter((path) => path.includes('event-names'))).toEqual([]);
  });
});
