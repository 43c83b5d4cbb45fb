import { SignJWT } from 'jose';

/** A bearer token the local stack accepts: HS256 with `AUTH_JWT_SECRET`, one hour by default. */
export async function mintLocalToken(input: {
  secret: string;
  sub: string;
  accountId?: string;
  expiresInSeconds?: number;
  issuer?: string;
  audience?: string;
  /** More claims, e.g. `{ 'cognito:groups': ['flowgate-admins'] }` for an administrator. */
  claims?: Record<string, unknown>;
}): Promise<string> {
  const jwt = new SignJWT({ ...input.claims, ...(input.accountId && { account_id: input.accountId }) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(input.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (input.expiresInSeconds ?? 3600));
  if (input.issuer) jwt.setIssuer(input.issuer);
  if (input.audience) jwt.setAudience(input.audience);
  return jwt.sign(new TextEncoder().encode(input.secret));
}
