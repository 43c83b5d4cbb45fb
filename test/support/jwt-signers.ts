/**
 * JWTs as Netlify and Google sign them, for tests. Netlify's is built with node:crypto alone
 * (header.payload, HMAC-SHA256, base64url), so the verifier's jose is not checked against itself.
 */
import { createHash, createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import { selfSignedCertificate } from './certificates.js';

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/**
 * `X-Webhook-Signature` as Netlify sends it: a JWS (HS256) whose claims are `iss: "netlify"` and
 * `sha256`, the hex SHA-256 of the body. https://docs.netlify.com/site-deploys/deploy-notifications/#payload-signature
 */
export function signNetlify(body: string, secret: string, claims: Record<string, unknown> = {}): Record<string, string> {
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(JSON.stringify({ iss: 'netlify', sha256: createHash('sha256').update(body).digest('hex'), ...claims }));
  const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
  return { 'X-Webhook-Signature': `${header}.${payload}.${signature}` };
}

export interface GoogleKey {
  kid: string;
  privateKey: KeyObject;
  /** The public key as a JWK, as https://www.googleapis.com/oauth2/v3/certs lists it. */
  jwk: JWK;
  /** The same key in an X.509 certificate, as https://www.googleapis.com/oauth2/v1/certs lists it. */
  certificate: string;
}

/** A signing key standing in for one of Google's. */
export function googleKey(kid: string): GoogleKey {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...pair.publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } as JWK;
  return { kid, privateKey: pair.privateKey, jwk, certificate: selfSignedCertificate({ commonName: 'federated-signon.system.gserviceaccount.com', keyPair: pair }).pem };
}

/** The JWKS document listing `keys`. */
export const googleJwks = (...keys: GoogleKey[]) => JSON.stringify({ keys: keys.map((key) => key.jwk) });

/**
 * The OIDC token Pub/Sub puts in `Authorization: Bearer` for an authenticated push subscription:
 * RS256 by Google, `iss` accounts.google.com, `aud` the subscription's audience, `email` its
 * service account. https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions
 */
export async function signGooglePush(
  key: GoogleKey,
  claims: { aud: string; email: string; iat: number; exp?: number; iss?: string; email_verified?: boolean },
): Promise<Record<string, string>> {
  const { aud, iat, exp = iat + 3600, iss = 'https://accounts.google.com', ...rest } = claims;
  const jwt = await new SignJWT({ email_verified: true, sub: '112233445566778899000', azp: '112233445566778899000', ...rest })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setIssuer(iss)
    .setAudience(aud)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return { Authorization: `Bearer ${jwt}` };
}
