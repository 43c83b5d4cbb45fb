/**
 * Google Pub/Sub authenticated push, proven against Google's own `google-auth-library`
 * (`OAuth2Client.verifyIdToken`), as Google's documentation verifies the token:
 * https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions
 * Tokens are signed with a test key standing in for Google's. Google's library is handed that key's
 * certificate in place of its fetch of Google's certificates (`getFederatedSignonCertsAsync`); ours
 * fetches the JWKS from a local HTTPS server standing in for www.googleapis.com, through the real
 * HttpsKeyFetcher. Google's library checks the signature, the issuer, the time and the audience;
 * the email check is the one Google's docs add by hand (`claim['email'] == ...` and
 * `email_verified`), done here beside it.
 */
import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpsKeyFetcher } from '../../../functions/adapters/https-key-fetcher.js';
import { checkSenderSecret } from '../../../functions/domain/webhooks/senders/secrets.js';
import { verifySender } from '../../../functions/domain/webhooks/senders/verify.js';
import { googleJwks, googleKey, signGooglePush } from '../../support/jwt-signers.js';
import { localFetcher, startKeyServer, type KeyServer } from '../../support/key-server.js';
import { rowOf } from '../../support/sender-proof.js';
import { contextFor } from '../../support/verify-context.js';

/**
 * The catalog's `google_pubsub` row: RS256 only, Google's two issuer spellings, a token that must
 * carry `exp` and `iat`, and Google's own clock skew of five minutes
 * (`OAuth2Client.CLOCK_SKEW_SECS_`). The pasted secret is `<audience> <service account email>`.
 */
const GOOGLE_PUBSUB = rowOf('google_pubsub');
const AUDIENCE = 'https://hooks.example.com/webhooks/wh_pubsub';
const EMAIL = 'pubsub-push@my-project.iam.gserviceaccount.com';
/** The subscription the trigger used before, kept during a rotation overlap. */
const OLD_AUDIENCE = 'https://hooks.example.com/webhooks/wh_pubsub_old';
const OLD_EMAIL = 'old-push@my-project.iam.gserviceaccount.com';
const BODY = JSON.stringify({ message: { data: 'SGVsbG8gQ2xvdWQgUHViL1N1YiEgSGVyZSBpcyBteSBtZXNzYWdlIQ==', messageId: '2070443601311540', publishTime: '2023-11-14T22:13:20Z' }, subscription: 'projects/my-project/subscriptions/my-push' });

const key = googleKey('f5f4bf46e52b31d9b6249f7309ad0338400680cd');
const impostor = googleKey(key.kid);
const nowSeconds = () => Math.floor(Date.now() / 1000);

let server: KeyServer;
let keys: ReturnType<typeof localFetcher>;
beforeAll(async () => {
  server = await startKeyServer();
  server.routes.set('/www.googleapis.com/oauth2/v3/certs', { body: googleJwks(key), headers: { 'content-type': 'application/json' } });
  keys = localFetcher(server, new HttpsKeyFetcher({ ca: server.ca }));
});
afterAll(() => server.close());

/** Google's verdict: verifyIdToken with Google's certificates replaced by the test key's, then the documented email check. */
async function googleVerdict(authorization: string | undefined): Promise<boolean> {
  const client = new OAuth2Client();
  client.getFederatedSignonCertsAsync = async () => ({ certs: { [key.kid]: key.certificate }, format: 'PEM' as never });
  try {
    const ticket = await client.verifyIdToken({ idToken: authorization?.replace(/^Bearer /, '') ?? '', audience: AUDIENCE });
    const claims = ticket.getPayload();
    return claims?.email === EMAIL && claims.email_verified === true;
  } catch {
    return false;
  }
}

async function verdicts(headers: Record<string, string>, body = BODY) {
  const ours = await verifySender(GOOGLE_PUBSUB, contextFor({ body, headers, secrets: [`${AUDIENCE} ${EMAIL}`], keys, nowSeconds: nowSeconds() }));
  return { ours, google: await googleVerdict(headers.Authorization) };
}

const push = (overrides: Partial<Parameters<typeof signGooglePush>[1]> = {}, signer = key) =>
  signGooglePush(signer, { aud: AUDIENCE, email: EMAIL, iat: nowSeconds() - 5, ...overrides });

describe('google_pubsub: the push OIDC token, as google-auth-library verifies it', () => {
  it('a genuine push passes both', async () => {
    expect(await verdicts(await push())).toEqual({ ours: true, google: true });
  });

  it('a token by another key under the same kid fails both', async () => {
    expect(await verdicts(await push({}, impostor))).toEqual({ ours: false, google: false });
  });

  it('a missing Authorization header fails both', async () => {
    expect(await verdicts({})).toEqual({ ours: false, google: false });
  });

  it('an expired token (past the five minutes of skew) fails both', async () => {
    expect(await verdicts(await push({ iat: nowSeconds() - 4000, exp: nowSeconds() - 400 }))).toEqual({ ours: false, google: false });
  });

  it('another audience fails both', async () => {
    expect(await verdicts(await push({ aud: 'https://elsewhere.example/push' }))).toEqual({ ours: false, google: false });
  });

  it("another project's service account fails both (the email check Google's docs add)", async () => {
    expect(await verdicts(await push({ email: 'attacker@evil-project.iam.gserviceaccount.com' }))).toEqual({ ours: false, google: false });
  });

  it('another issuer fails both', async () => {
    expect(await verdicts(await push({ iss: 'https://evil.example' }))).toEqual({ ours: false, google: false });
  });

  it("a changed body passes both: Google's token authenticates the sender, not the body (the docs offer no body binding)", async () => {
    expect(await verdicts(await push(), BODY.replace('my-push', 'other'))).toEqual({ ours: true, google: true });
  });

  it('rotation (a new push subscription): a token for either pasted pair passes, never one pairing the audience of one with the email of the other', async () => {
    const secrets = [`${OLD_AUDIENCE} ${OLD_EMAIL}`, `${AUDIENCE} ${EMAIL}`];
    const verify = async (headers: Record<string, string>) => verifySender(GOOGLE_PUBSUB, contextFor({ body: BODY, headers, secrets, keys, nowSeconds: nowSeconds() }));
    expect(await verify(await push({ aud: OLD_AUDIENCE, email: OLD_EMAIL }))).toBe(true);
    expect(await verify(await push())).toBe(true);
    expect(await verify(await push({ aud: OLD_AUDIENCE, email: EMAIL }))).toBe(false);
  });

  it('checkSenderSecret accepts both pasted pairs, and refuses the email alone (as the label asked for before)', () => {
    expect(checkSenderSecret(GOOGLE_PUBSUB, `${AUDIENCE} ${EMAIL}`)).toBeUndefined();
    expect(checkSenderSecret(GOOGLE_PUBSUB, `${OLD_AUDIENCE} ${OLD_EMAIL}`)).toBeUndefined();
    expect(checkSenderSecret(GOOGLE_PUBSUB, EMAIL)).toMatch(/audience, a space, and its service account email/);
  });

  it('a token issued in the future (past the five minutes of skew) fails both', async () => {
    expect(await verdicts(await push({ iat: nowSeconds() + 600 }))).toEqual({ ours: false, google: false });
    expect(await verdicts(await push({ iat: nowSeconds() + 200 }))).toEqual({ ours: true, google: true });
  });

  it('a token older than Google\'s one hour (plus the skew) fails ours, whatever its exp says', async () => {
    const ours = async (iat: number) => verifySender(GOOGLE_PUBSUB, contextFor({ body: BODY, headers: await push({ iat, exp: nowSeconds() + 60 }), secrets: [`${AUDIENCE} ${EMAIL}`], keys, nowSeconds: nowSeconds() }));
    expect(await ours(nowSeconds() - 4000)).toBe(false);
    expect(await ours(nowSeconds() - 3600)).toBe(true);
  });

  it('the JWKS was fetched once for all of these (a cache hit does not refetch)', () => {
    expect(server.hits.get('/www.googleapis.com/oauth2/v3/certs')).toBe(1);
  });
});
