/**
 * JSON read before a request is verified (signed fields, a sender's message, a list of signed
 * items) has its nesting checked before it is parsed, as every body the gateway parses does
 * (`shared/json.ts`): an unsigned body a megabyte deep must not be built first.
 */
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_JSON_DEPTH } from '../../../functions/shared/json.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { NOW, rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/** `depth` arrays, one inside the other. */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const TOO_DEEP = nested(MAX_JSON_DEPTH + 1);
const MAILGUN_KEY = 'key-mailgun-deep';

/** A genuine Mailgun delivery whose unsigned `event-data` is `eventData` (JSON text). */
function mailgun(eventData: string): string {
  const token = 'a'.repeat(50);
  const signature = createHmac('sha256', MAILGUN_KEY).update(`${NOW}${token}`).digest('hex');
  return `{"signature":{"timestamp":"${NOW}","token":"${token}","signature":"${signature}"},"event-data":${eventData}}`;
}

afterEach(() => vi.restoreAllMocks());

describe('JSON read before verification is depth-checked before it is parsed', () => {
  it(`verifySender(mailgun) returns false for a signed body nested deeper than ${MAX_JSON_DEPTH}, and true at the limit`, async () => {
    const row = rowOf('mailgun');
    expect(await verifySender(row, contextFor({ body: mailgun(nested(MAX_JSON_DEPTH - 1)), secrets: [MAILGUN_KEY] }))).toBe(true);
    expect(await verifySender(row, contextFor({ body: mailgun(TOO_DEEP), secrets: [MAILGUN_KEY] }))).toBe(false);
  });

  it.each([
    ['mailgun', {}, 'key'],
    ['adyen', {}, 'a1'.repeat(32)],
    ['linear', { 'linear-signature': '0'.repeat(64) }, 'linear-secret'],
    ['microsoft_graph', {}, 'client-state'],
    ['aws_sns', {}, 'arn:aws:sns:us-west-2:123456789012:MyTopic'],
  ])('verifySender(%s) never parses a body nested deeper than the limit', async (id, headers, secret) => {
    const parse = vi.spyOn(JSON, 'parse');
    const body = `{"value":${TOO_DEEP},"notificationItems":${TOO_DEEP},"Type":"Notification"}`;
    expect(await verifySender(rowOf(id), contextFor({ body, headers, secrets: [secret] }))).toBe(false);
    expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.includes(TOO_DEEP))).toEqual([]);
  });
});
