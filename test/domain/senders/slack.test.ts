import { senderSdks } from '../../support/sender-sdks.js';
import { createHmac } from 'node:crypto';
import { accepts, atClock, JSON_BODY, proveHmacSender } from '../../support/sender-proof.js';

// Slack publishes no signer: signed as https://api.slack.com/authentication/verifying-requests-from-slack
// describes, and checked by @slack/bolt's verifySlackRequest.
proveHmacSender('slack', {
  secret: 'slack-signing-secret-one',
  otherSecret: 'slack-signing-secret-two',
  sign: (secret, now) => ({
    body: JSON_BODY,
    headers: {
      'X-Slack-Signature': `v0=${createHmac('sha256', secret).update(`v0:${now}:${JSON_BODY}`).digest('hex')}`,
      'X-Slack-Request-Timestamp': String(now),
    },
  }),
  official: (sent, signingSecret, now) =>
    atClock(now, () =>
      accepts(() =>
        senderSdks.verifySlackRequest({
          signingSecret,
          body: sent.body.toString(),
          headers: { 'x-slack-signature': sent.headers['X-Slack-Signature']!, 'x-slack-request-timestamp': Number(sent.headers['X-Slack-Request-Timestamp']) },
        }),
      ),
    ),
});
