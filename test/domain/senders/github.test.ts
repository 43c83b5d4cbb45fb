import { sign, verify } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { JSON_BODY, proveHmacSender, rowOf, verifySent } from '../../support/sender-proof.js';

// Signed and checked by @octokit/webhooks-methods, GitHub's own.
proveHmacSender('github', {
  secret: 'github-proof-one',
  otherSecret: 'github-proof-two',
  sign: async (secret) => ({ body: JSON_BODY, headers: { 'X-Hub-Signature-256': await sign(secret, JSON_BODY) } }),
  official: (sent, secret) => verify(secret, sent.body.toString(), sent.headers['X-Hub-Signature-256']!),
});

// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
describe('github (GitHub) documentation vector', () => {
  it("verifySender(github) returns true for the documented vector (It's a Secret to Everybody / Hello, World!)", async () => {
    const sent = {
      body: 'Hello, World!',
      headers: { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' },
    };
    expect(await verifySent(rowOf('github'), sent, ["It's a Secret to Everybody"])).toBe(true);
  });
});
