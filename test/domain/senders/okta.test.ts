/**
 * Okta event hooks, proven from Okta's documentation (no verifying library): the admin names an
 * authentication header ("Authentication field", usually `Authorization`) and its secret value,
 * which Okta sends with every event. The user pastes the pair as a header line.
 * https://developer.okta.com/docs/concepts/event-hooks/ and
 * https://developer.okta.com/docs/guides/event-hook-implementation/nodejs/main/
 */
import { describe, expect, it } from 'vitest';
import { verifyStaticToken, type StaticTokenParams } from '../../../functions/domain/webhooks/senders/primitives/token.js';
import { contextFor } from '../../support/verify-context.js';

/** The parameters of the `okta` catalog row: the header is the admin's choice, so it comes with the secret. */
const OKTA: StaticTokenParams = { location: 'named_header' };
const PASTED = 'Authorization: my-okta-shared-secret';
const BODY = JSON.stringify({ eventType: 'com.okta.event_hook', eventTypeVersion: '1.0', cloudEventsVersion: '0.1', data: { events: [{ eventType: 'user.session.start' }] } });
const HEADERS = { Authorization: 'my-okta-shared-secret', 'Content-Type': 'application/json' };

const verify = (headers: Record<string, string>, secrets = [PASTED], body = BODY) => verifyStaticToken(OKTA, contextFor({ body, headers, secrets }));

describe('okta: the authentication header the admin chose', () => {
  it('a genuine event passes', () => expect(verify(HEADERS)).toBe(true));
  it('another secret fails', () => expect(verify({ ...HEADERS, Authorization: 'guess' })).toBe(false));
  it('a missing header fails', () => expect(verify({ 'Content-Type': 'application/json' })).toBe(false));
  it('a changed body still passes: the header authenticates Okta, it does not sign the body', () => expect(verify(HEADERS, [PASTED], '{}')).toBe(true));
  it('a header name other than Authorization works as configured', () =>
    expect(verify({ 'X-Okta-Secret': 'custom' }, ['X-Okta-Secret: custom'])).toBe(true));
  it('secret rotation: either of two passes', () => expect(verify(HEADERS, ['Authorization: old', PASTED])).toBe(true));
});
