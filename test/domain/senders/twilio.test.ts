import { senderSdks } from '../../support/sender-sdks.js';
import { describe, expect, it } from 'vitest';
import { signTwilio } from '../../support/signers.js';
import { proveHmacSender, rowOf, verifySent, WEBHOOK_URL } from '../../support/sender-proof.js';

// Signed by twilio-node's getExpectedTwilioSignature (test/support/signers.ts), checked by its validateRequest.
const FORM = 'application/x-www-form-urlencoded';
const FORM_BODY = 'AccountSid=AC123&Body=Hello+there&From=%2B15551234567&MessageSid=SM1';
const URL = `${WEBHOOK_URL}?tenant=a`;

proveHmacSender('twilio', {
  secret: 'twilio-auth-token-one',
  otherSecret: 'twilio-auth-token-two',
  sign: (authToken) => {
    const { url, headers } = signTwilio({ authToken, url: URL, body: FORM_BODY, contentType: FORM });
    return { body: FORM_BODY, headers, url };
  },
  tamper: (sent) => ({ ...sent, body: sent.body.toString().replace('Hello', 'Jello') }),
  official: (sent, authToken) =>
    senderSdks.twilio.validateRequest(authToken, sent.headers['x-twilio-signature']!, sent.url!, Object.fromEntries(new URLSearchParams(sent.body.toString()))),
});

describe('twilio (Twilio) JSON bodies', () => {
  it('verifySender(twilio) returns true for a JSON body bound by bodySHA256, as twilio.validateRequestWithBody does', async () => {
    const body = '{"event":"call.completed"}';
    const { url, headers } = signTwilio({ authToken: 'token', url: WEBHOOK_URL, body, contentType: 'application/json' });
    expect(senderSdks.twilio.validateRequestWithBody('token', headers['x-twilio-signature']!, url, body)).toBe(true);
    expect(await verifySent(rowOf('twilio'), { body, headers, url }, ['token'])).toBe(true);
    expect(await verifySent(rowOf('twilio'), { body: `${body} `, headers, url }, ['token'])).toBe(false);
  });
});
