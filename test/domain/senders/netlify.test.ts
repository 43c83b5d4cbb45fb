/**
 * Netlify deploy notifications, proven from Netlify's documentation (Netlify publishes no
 * verifying library): "Payload signature" — a JWS signed with the secret you set, in
 * `X-Webhook-Signature`, with `iss: "netlify"` and `sha256`, the hex SHA-256 of the payload.
 * https://docs.netlify.com/site-deploys/deploy-notifications/#payload-signature
 * The token is built here with node:crypto alone, not with the jose the verifier uses.
 */
import { describe, expect, it } from 'vitest';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { signNetlify } from '../../support/jwt-signers.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/** The catalog's `netlify` row. Netlify's token carries no time, so there is none to check. */
const NETLIFY = rowOf('netlify');
const SECRET = 'my-netlify-jws-secret';
const BODY = JSON.stringify({ id: '5ebc34bf4fea0b01f02efa3a', site_id: 'fa4dd95a-994e-4f89-8a7a-2d9e9fc36a32', state: 'ready', name: 'www-example', branch: 'main', context: 'production' });

const verify = (body: string, headers: Record<string, string>, secrets = [SECRET]) => verifySender(NETLIFY, contextFor({ body, headers, secrets }));

describe("netlify: the HS256 JWS of X-Webhook-Signature, as Netlify's docs describe it", () => {
  it('a genuine deploy notification passes', async () => {
    expect(await verify(BODY, signNetlify(BODY, SECRET))).toBe(true);
  });

  it('a changed body fails (the sha256 claim binds it)', async () => {
    expect(await verify(BODY.replace('ready', 'error'), signNetlify(BODY, SECRET))).toBe(false);
  });

  it('another JWS secret fails', async () => {
    expect(await verify(BODY, signNetlify(BODY, 'someone-elses-secret'))).toBe(false);
  });

  it('a missing X-Webhook-Signature fails', async () => {
    expect(await verify(BODY, {})).toBe(false);
  });

  it('a token whose issuer is not netlify fails', async () => {
    expect(await verify(BODY, signNetlify(BODY, SECRET, { iss: 'not-netlify' }))).toBe(false);
  });

  it('checkSenderSecret accepts the JWS secret', () => {
    expect(checkSenderSecret(NETLIFY, SECRET)).toBeUndefined();
  });

  it('secret rotation: either of two secrets passes', async () => {
    expect(await verify(BODY, signNetlify(BODY, SECRET), ['the-old-secret', SECRET])).toBe(true);
  });
});
