/**
 * Okta event hooks, proven from Okta's documentation (no verifying library): the admin names an
 * authentication header ("Authentication field", usually `Authorization`) and its secret value,
 * which Okta sends with every event. The user pastes the pair as a header line.
 * https://developer.okta.com/docs/concepts/event-hooks/ and
 * https://developer.okta.com/docs/guides/event-hook-implementation/nodejs/main/
 */
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/** The catalog's `okta` row. */
const OKTA = rowOf('okta');
const PASTED = 'Authorization: my-okta-shared-secret';
const BODY = JSON.stringify({ eventType: 'com.okta.event_hook', eventTypeVersion: '1.0', cloudEventsVersion: '0.1', data: { events: [{ eventType: 'user.session.start' }] } });
const HEADERS = { Authorization: 'my-okta-shared-secret', 'Content-Type': 'application/json' };

const verify = (headers: Record<string, string>, secrets = [PASTED], body = BODY) => verifySender(OKTA, contextFor({ body, headers, secrets }));

describe('okta: the authentication header the admin chose', () => {
  it('a genuine event passes', async () => expect(await verify(HEADERS)).toBe(true));
  it('another secret fails', async () => expect(await verify({ ...HEADERS, Authorization: 'guess' })).toBe(false));
  it('a missing header fails', async () => expect(await verify({ 'Content-Type': 'application/json' })).toBe(false));
  it('a changed body still passes: the header authenticates Okta, it does not sign the body', async () =>
    expect(await verify(HEADERS, [PASTED], '{}')).toBe(true));
  it('a header name other than Authorization works as configured', async () =>
    expect(await verify({ 'X-Okta-Secret': 'custom' }, ['X-Okta-Secret: custom'])).toBe(true));
  it('secret rotation: either of two passes', async () => expect(await verify(HEADERS, ['Authorization: old', PASTED])).toBe(true));
  it('checkSenderSecret accepts the header line and refuses the value alone, naming the form', () => {
    expect(checkSenderSecret(OKTA, PASTED)).toBeUndefined();
    expect(checkSenderSecret(OKTA, 'my-okta-shared-secret')).toMatch(/Name: value/);
  });
});
