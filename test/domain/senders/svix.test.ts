import { Webhook } from 'svix';
import { describe, expect, it } from 'vitest';
import { accepts, atClock, JSON_BODY, proveHmacSender, rowOf, verifySent } from '../../support/sender-proof.js';

// Resend and Clerk deliver through Svix: signed by the svix library's Webhook#sign, checked by its Webhook#verify.
for (const id of ['resend', 'clerk', 'svix']) {
  proveHmacSender(id, {
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    otherSecret: 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=',
    sign: (secret, now) => ({
      body: JSON_BODY,
      headers: { 'svix-id': 'msg_proof', 'svix-timestamp': String(now), 'svix-signature': new Webhook(secret).sign('msg_proof', new Date(now * 1000), JSON_BODY) },
    }),
    official: (sent, secret, now) => atClock(now, () => accepts(() => new Webhook(secret).verify(sent.body, sent.headers))),
  });
}

// https://docs.svix.com/receiving/verifying-payloads/how-manual (the vector of shared/senders.md).
describe('svix documentation vector', () => {
  const vector = {
    body: '{"test": 2432232314}',
    headers: { 'svix-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'svix-timestamp': '1614265330', 'svix-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' },
  };

  it('verifySender(svix) returns true for the documented vector at its own time', async () => {
    expect(await verifySent(rowOf('svix'), vector, ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], 1614265330)).toBe(true);
  });

  it('verifySender(svix) returns true when the matching signature is the second of a space-separated list', async () => {
    const headers = { ...vector.headers, 'svix-signature': `v1,${Buffer.alloc(32).toString('base64')} ${vector.headers['svix-signature']}` };
    expect(await verifySent(rowOf('svix'), { ...vector, headers }, ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], 1614265330)).toBe(true);
  });

  it('verifySender(svix) returns false for a changed svix-id', async () => {
    const headers = { ...vector.headers, 'svix-id': 'msg_other' };
    expect(await verifySent(rowOf('svix'), { ...vector, headers }, ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], 1614265330)).toBe(false);
  });
});
