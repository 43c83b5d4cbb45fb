// A JWT in a request header, checked with jose (as the gateway checks its bearer tokens):
// Netlify, HS256 with the shared secret: https://docs.netlify.com/site-deploys/deploy-notifications/#payload-signature
// Google Pub/Sub push, RS256 by Google's JWKS: https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions
import { createHash } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { headerValue } from '../../headers.js';
import type { VerifyContext } from '../context.js';
import { equalsAny, equalText } from './equal-text.js';

/** The JWS algorithms a row may allow: HMAC with the pasted secret, or RSA / P-256 with the sender's keys. */
export type JwtAlgorithm = 'HS256' | 'RS256' | 'ES256';

interface JwtCommonParams {
  /** Lower-case name of the header carrying the token. */
  header: string;
  /** When set, the header is `<scheme> <token>` (the scheme matched case-insensitively), e.g. `Bearer`. */
  scheme?: string;
  /** Algorithms accepted, fixed by the row: never read from the token (no `none`, no HS256-with-a-public-key). */
  algorithms: readonly JwtAlgorithm[];
  /** Accepted `iss` values. */
  issuers: readonly string[];
  /** Claims that must be present, e.g. `exp` and `iat` for tokens that must expire. */
  requiredClaims?: readonly string[];
  /** Leeway for `exp`, `nbf` and `iat` against the injected clock. */
  clockToleranceSeconds?: number;
  /**
   * The oldest `iat` accepted, in seconds (plus the leeway); `iat` is then required, and one in the
   * future beyond the leeway is refused too: a token cannot be issued after it arrives.
   */
  maxTokenAgeSeconds?: number;
  /** A claim that must hold the hex SHA-256 of the raw body, binding the token to this request (Netlify: `sha256`). */
  bodySha256Claim?: string;
}

export type JwtParams =
  | (JwtCommonParams & {
      /** HMAC: the pasted secret is the signing key (its UTF-8 bytes); several during a rotation. */
      key: 'secret';
    })
  | (JwtCommonParams & {
      /**
       * The sender's own key set: anyone can get a token from such a sender (any Google Cloud project
       * can push to any URL), so the pasted secret names what makes a token ours: the expected
       * audience and the service account's email, separated by a space. Both are required.
       */
      key: 'jwks';
      /** The sender's JWKS document, fixed by the row (never from the request), fetched through the KeyFetcher. */
      jwksUrl: string;
    });

/** Tokens are a few hundred bytes; refuse a header that is clearly not one before decoding it. */
const MAX_TOKEN_CHARS = 16 * 1024;

/**
 * True when the request carries a JWT that verifies under the row's rules and one of `ctx.secrets`:
 * signature (with the allowed algorithms only), issuer, expiry against `ctx.request.nowSeconds`,
 * required claims, the body hash claim, and for a JWKS row the audience and email pasted. A
 * missing, malformed or unverifiable token is `false`; nothing here throws on request content.
 */
export async function verifyJwt(params: JwtParams, ctx: VerifyContext): Promise<boolean> {
  const jwt = readToken(params, ctx.request.headers);
  if (jwt === undefined) return false;
  const options = {
    algorithms: [...params.algorithms],
    issuer: [...params.issuers],
    currentDate: new Date(ctx.request.nowSeconds * 1000),
    clockTolerance: params.clockToleranceSeconds ?? 0,
    requiredClaims: params.requiredClaims ? [...params.requiredClaims] : undefined,
    ...(params.maxTokenAgeSeconds !== undefined && { maxTokenAge: params.maxTokenAgeSeconds }),
  };
  try {
    if (params.key === 'secret') {
      for (const secret of ctx.secrets) {
        if (secret.length === 0) continue; // an empty HMAC key is a key anyone has
        const payload = await verified(jwt, new TextEncoder().encode(secret), options);
        if (payload && bodyMatches(params, payload, ctx.request.rawBody)) return true;
      }
      return false;
    }
    const expectations = ctx.secrets.map(parseAudienceAndEmail).filter((e): e is AudienceAndEmail => e !== undefined);
    if (expectations.length === 0) return false;
    const keys = keySet(await ctx.keys.fetchText(params.jwksUrl));
    if (!keys) return false;
    const payload = await verified(jwt, keys, { ...options, audience: expectations.map((e) => e.audience) });
    if (!payload || !bodyMatches(params, payload, ctx.request.rawBody)) return false;
    // The audience and the email must come from one pasted pair, not one from each.
    const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    return expectations.some((e) => audiences.some((aud) => typeof aud === 'string' && equalText(aud, e.audience)) && emailMatches(payload, e.email));
  } catch {
    return false; // the key set could not be fetched
  }
}

type VerifyOptions = Parameters<typeof jwtVerify>[2];

async function verified(jwt: string, key: Uint8Array | JWTVerifyGetKey, options: VerifyOptions): Promise<JWTPayload | undefined> {
  try {
    const { payload } = typeof key === 'function' ? await jwtVerify(jwt, key, options) : await jwtVerify(jwt, key, options);
    return payload;
  } catch {
    return undefined; // jose throws for every refusal: bad signature, expired, wrong issuer, malformed
  }
}

function readToken(params: JwtParams, headers: Readonly<Record<string, string>>): string | undefined {
  const value = headerValue(headers, params.header);
  if (value === undefined || value.length > MAX_TOKEN_CHARS) return undefined;
  if (params.scheme === undefined) return value;
  const space = value.indexOf(' ');
  if (space < 0 || value.slice(0, space).toLowerCase() !== params.scheme.toLowerCase()) return undefined;
  const jwt = value.slice(space + 1).trim();
  return jwt === '' ? undefined : jwt;
}

function bodyMatches(params: JwtParams, payload: JWTPayload, rawBody: Uint8Array): boolean {
  if (params.bodySha256Claim === undefined) return true;
  const claimed = payload[params.bodySha256Claim];
  return typeof claimed === 'string' && equalText(claimed.toLowerCase(), createHash('sha256').update(rawBody).digest('hex'));
}

/** Google marks the email verified; an unverified one names nobody. */
function emailMatches(payload: JWTPayload, email: string): boolean {
  return typeof payload.email === 'string' && payload.email_verified === true && equalsAny(payload.email.toLowerCase(), [email.toLowerCase()]);
}

interface AudienceAndEmail {
  audience: string;
  email: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function parseAudienceAndEmail(secret: string): AudienceAndEmail | undefined {
  const parts = secret.trim().split(/\s+/);
  if (parts.length !== 2 || !EMAIL.test(parts[1]!)) return undefined;
  return { audience: parts[0]!, email: parts[1]! };
}

/** Key sets seen recently, parsed once per document text (`null`: not a JWKS). Bounded. */
const keySets = new Map<string, JWTVerifyGetKey | null>();
const MAX_KEY_SETS = 16;

function keySet(text: string): JWTVerifyGetKey | undefined {
  let keys = keySets.get(text);
  if (keys === undefined) {
    try {
      keys = createLocalJWKSet(JSON.parse(text) as JSONWebKeySet);
    } catch {
      keys = null;
    }
    if (keySets.size >= MAX_KEY_SETS) keySets.clear();
    keySets.set(text, keys);
  }
  return keys ?? undefined;
}

/** Why a pasted value would never verify for this row; `undefined` when usable. */
export function checkJwtSecret(secret: string, params: JwtParams): string | undefined {
  if (params.key === 'secret') {
    if (secret.length === 0) return 'the signing secret is empty';
    return /^\s|\s$/.test(secret) ? 'the signing secret starts or ends with spaces; paste it exactly as shown' : undefined;
  }
  return parseAudienceAndEmail(secret)
    ? undefined
    : "paste the push subscription's audience, a space, and its service account email (e.g. https://example.com/hook push@my-project.iam.gserviceaccount.com)";
}
