import type { JWTPayload } from 'jose';
import { AppError } from '../shared/errors.js';
import { DEFAULT_KEY_SCOPES, grantsScope, hashApiKey, type ApiKeyStore, type Scope, type SearchRestriction } from './api-keys.js';

/** Who is calling. `accountId` scopes everything the caller owns. */
export interface Principal {
  accountId: string;
  subject: string;
  via: 'bearer' | 'api_key';
  /**
   * What the credential may reach: an API key's own scopes; a user's token every scope but
   * `admin`, and `admin` too when the token names the administrators' group.
   */
  scopes: readonly Scope[];
  /**
   * The app a user's token was issued to (its `client_id`, as Cognito's access tokens have it, else
   * its `aud`): the audience of the step-up proofs it gets. Absent for API keys and tokens without either.
   */
  app?: string;
  /** A search-only key's index and fixed filter: its queries reach that index only, within that filter. */
  search?: SearchRestriction;
}

/** Claims that list a user's groups: Cognito's, and the common name other issuers use. */
const GROUP_CLAIMS = ['cognito:groups', 'groups'] as const;

/** Whether the token's claims put its user in `group`. */
function inGroup(claims: JWTPayload, group: string | undefined): boolean {
  if (!group) return false;
  return GROUP_CLAIMS.some((name) => {
    const value = claims[name];
    return Array.isArray(value) ? value.includes(group) : typeof value === 'string' && value.split(' ').includes(group);
  });
}

const appOf = (claims: JWTPayload): string | undefined => {
  if (typeof claims.client_id === 'string' && claims.client_id) return claims.client_id;
  const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
  return typeof aud === 'string' && aud ? aud : undefined;
};

export interface AuthenticatorOptions {
  /** The group (in `cognito:groups` or `groups`) whose users are administrators; none when unset. */
  adminGroup?: string;
}

/** Checks a bearer token's signature and claims; throws when it does not hold. */
export type TokenVerifier = (token: string) => Promise<JWTPayload>;

/** The scheme name is case-insensitive (RFC 9110 §11.1); the token is a compact JWS. */
const BEARER = /^bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)$/i;
const MAX_CREDENTIAL_LENGTH = 8192;
/** OpenID Connect caps `sub` at 255 ASCII characters; 256 UTF-16 code units is our ceiling for both ids. */
const MAX_IDENTIFIER_LENGTH = 256;
/** C0 and C1 controls, DEL, and UTF-16 surrogates without their pair. */
const UNUSABLE_IN_IDENTIFIER = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const isIdentifier = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_IDENTIFIER_LENGTH && !UNUSABLE_IN_IDENTIFIER.test(value);

/**
 * The gateway's credential check, done in the handlers rather than by an API Gateway authorizer
 * so that every denial has the `{"error": "unauthorized"}` shape.
 */
export class Authenticator {
  constructor(
    private readonly verifyToken: TokenVerifier,
    private readonly apiKeys: Pick<ApiKeyStore, 'findByHash'>,
    private readonly options: AuthenticatorOptions = {},
  ) {}

  /**
   * @param accept `gateway` takes a bearer JWT or an `X-Api-Key`; `bearer` only a user's JWT;
   *   `api_key` only an account's `X-Api-Key` (a user's token, however valid, is refused).
   * @param scope what the route needs (the route table's `scope`): a credential without it is 403 `forbidden`.
   */
  async authenticate(
    event: { headers?: Readonly<Record<string, string | undefined>> },
    accept: 'gateway' | 'bearer' | 'api_key',
    scope?: Scope,
  ): Promise<Principal> {
    const principal = await this.identify(event, accept);
    if (scope !== undefined && !grantsScope(principal.scopes, scope)) {
      const who = principal.via === 'api_key' ? 'this API key' : 'this token';
      throw new AppError('forbidden', `missing scope ${scope}`, undefined, `${who} does not have the ${scope} scope this route needs`);
    }
    return principal;
  }

  private async identify(event: { headers?: Readonly<Record<string, string | undefined>> }, accept: 'gateway' | 'bearer' | 'api_key'): Promise<Principal> {
    const authorization = event.headers?.authorization;
    if (authorization !== undefined) {
      if (accept === 'api_key') throw new AppError('unauthorized', 'this route takes an API key, not a token');
      return this.fromBearer(authorization);
    }
    const apiKey = event.headers?.['x-api-key'];
    if (apiKey !== undefined && accept !== 'bearer') return this.fromApiKey(apiKey);
    throw new AppError('unauthorized', 'no credentials');
  }

  private async fromBearer(authorization: string): Promise<Principal> {
    const token = authorization.length <= MAX_CREDENTIAL_LENGTH ? BEARER.exec(authorization)?.[1] : undefined;
    if (!token) throw new AppError('unauthorized', 'malformed authorization header');
    let claims: JWTPayload;
    try {
      claims = await this.verifyToken(token);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError('unauthorized', 'token rejected');
    }
    const subject = claims.sub;
    // An absent `account_id` means the caller's own account (its `sub`). A present one that is not
    // an identifier (a number, an array, '', null…) is refused rather than ignored: falling back to
    // `sub` would scope the caller to an account its issuer never named.
    const accountId = claims.account_id === undefined ? subject : claims.account_id;
    // Both become parts of storage keys and the otpauth label: a non-string, a huge `sub` (over
    // DynamoDB's key size: a 500) or a lone surrogate (stored as U+FFFD, so two ids would collide)
    // must be refused here, however validly the token is signed.
    if (!isIdentifier(subject) || !isIdentifier(accountId)) throw new AppError('unauthorized', 'token has no usable subject or account');
    const scopes: Scope[] = [...DEFAULT_KEY_SCOPES, ...(inGroup(claims, this.options.adminGroup) ? ['admin' as const] : [])];
    const app = appOf(claims);
    return { accountId, subject, via: 'bearer', scopes, ...(app !== undefined && { app }) };
  }

  private async fromApiKey(apiKey: string): Promise<Principal> {
    if (apiKey.length === 0 || apiKey.length > MAX_CREDENTIAL_LENGTH) throw new AppError('unauthorized', 'malformed api key');
    const owner = await this.apiKeys.findByHash(hashApiKey(apiKey));
    if (!owner) throw new AppError('unauthorized', 'unknown api key');
    return { accountId: owner.accountId, subject: `apikey:${owner.id}`, via: 'api_key', scopes: owner.scopes, ...(owner.search && { search: owner.search }) };
  }
}
