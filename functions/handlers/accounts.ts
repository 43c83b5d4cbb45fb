import { randomBytes } from 'node:crypto';
import { DynamoAttemptStore } from '../adapters/aws/dynamo-attempt-store.js';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoMfaEventLog } from '../adapters/aws/dynamo-mfa-event-log.js';
import { DynamoMfaStore } from '../adapters/aws/dynamo-mfa-store.js';
import { DynamoApiKeyEventLog } from '../adapters/aws/dynamo-api-key-event-log.js';
import { DynamoApiKeyStore } from '../adapters/aws/dynamo-api-key-store.js';
import { DynamoProofLedger } from '../adapters/aws/dynamo-proof-ledger.js';
import { secretBoxFrom } from '../adapters/secret-box.js';
import { tokenSignerFrom } from '../adapters/token-signer.js';
import {
  createAccountUseCases, isProofPurpose, PROOF_PURPOSES, type AccountUseCases, type ClientInfo, type FactorsView, type MfaEvent, type ProofPurpose,
} from '../domain/accounts/index.js';
import type { Authenticator, Principal } from '../domain/authenticator.js';
import type { Clock } from '../domain/clock.js';
import type { Settings } from '../settings.js';
import { AppError } from '../shared/errors.js';
import { createHttpHandler } from '../shared/handler.js';
import { created, header, json, jsonObjectBody, limitParam, noContent, ok, pathParam, queryParam, type HttpEvent } from '../shared/http.js';
import { createGatewayAuthenticator } from './gateway-auth.js';

/** A required string field; anything else is a 400 `validation_error`, which costs no attempt. */
function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string') throw new AppError('validation_error', undefined, undefined, `${name} must be a string`);
  return value;
}

function optionalStringField(body: Record<string, unknown>, name: string): string | undefined {
  return body[name] === undefined ? undefined : stringField(body, name);
}

/** Where the request came from, for the audit log. */
const clientOf = (event: HttpEvent): ClientInfo => ({
  sourceIp: event.requestContext?.http?.sourceIp,
  userAgent: header(event, 'user-agent'),
});

const mfaToken = (event: HttpEvent) => header(event, 'x-mfa-token');

/** The caller as the use cases take it: who, which account, from where, and the app of its token. */
const callerOf = (event: HttpEvent, principal: Principal) => ({
  subject: principal.subject, accountId: principal.accountId, client: clientOf(event), ...(principal.app !== undefined && { app: principal.app }),
});

/** What the proof asked for is for: `sign_in` unless the body names another purpose. */
function purposeField(body: Record<string, unknown>): ProofPurpose | undefined {
  const value = body.purpose;
  if (value === undefined || isProofPurpose(value)) return value;
  throw new AppError('validation_error', 'bad purpose', undefined, `purpose must be one of ${PROOF_PURPOSES.join(', ')}`);
}

const factorsBody = (view: FactorsView) => ({
  factors: view.factors.map((f) => ({ id: f.id, type: f.type, name: f.name, created_at: f.createdAt, last_used_at: f.lastUsedAt })),
  recovery_codes_remaining: view.recoveryCodesLeft,
});

const eventBody = (event: MfaEvent) => ({
  type: event.type, at: event.at, factor_id: event.factorId ?? null, source_ip: event.sourceIp ?? null,
  user_agent: event.userAgent ?? null, ...(event.actor !== undefined && { actor: event.actor }),
});

/**
 * At sign-in a wrong code is a failed authentication (401), whether it is a TOTP or a recovery code;
 * at enrolment (a code that does not match the secret being set up) it stays 400.
 */
async function asSignInFailure<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AppError && error.code === 'invalid_code') throw new AppError('invalid_code', error.detail, error.headers, undefined, 401);
    throw error;
  }
}

/** The JWKS changes only with a deployment (a key rotation); caches may keep it 5 minutes. */
const JWKS_MAX_AGE_SECONDS = 300;
const EVENTS_PAGE = { default: 20, max: 100 };

/** The accounts routes over the given use cases; every factor belongs to the token's `sub`. */
export function createAccountsHandler(accounts: AccountUseCases, authenticator: Authenticator) {
  return createHttpHandler('accounts', {
    async startTotpRegistration({ event, principal }) {
      const started = await accounts.startRegistration({ ...callerOf(event, principal), mfaToken: mfaToken(event) });
      return ok({ secret: started.secret, otpauth_uri: started.otpauthUri });
    },
    async confirmTotpRegistration({ event, principal }) {
      const body = jsonObjectBody(event);
      const confirmed = await accounts.confirmRegistration({
        ...callerOf(event, principal), mfaToken: mfaToken(event),
        code: stringField(body, 'code'), secret: stringField(body, 'secret'), name: optionalStringField(body, 'name'),
      });
      // Every confirmation says which factor it added; only the first comes with recovery codes.
      return ok({ factor_id: confirmed.factorId, recovery_codes: confirmed.first ? confirmed.recoveryCodes : [] });
    },
    async verifyTotp({ event, principal }) {
      const body = jsonObjectBody(event);
      const input = { ...callerOf(event, principal), code: stringField(body, 'code'), factorId: optionalStringField(body, 'factor_id'), purpose: purposeField(body) };
      const verified = await asSignInFailure(() => accounts.verifyTotp(input));
      return ok({ mfa_token: verified.mfaToken, expires_at: verified.expiresAt, factor_id: verified.factorId });
    },
    async verifyRecoveryCode({ event, principal }) {
      const body = jsonObjectBody(event);
      const input = { ...callerOf(event, principal), code: stringField(body, 'code'), purpose: purposeField(body) };
      const used = await asSignInFailure(() => accounts.verifyRecoveryCode(input));
      return ok({ remaining: used.remaining, mfa_token: used.mfaToken, expires_at: used.expiresAt });
    },
    async listFactors({ principal }) {
      return ok(factorsBody(await accounts.listFactors({ subject: principal.subject })));
    },
    async removeFactor({ event, principal }) {
      await accounts.removeFactor({ ...callerOf(event, principal), factorId: pathParam(event, 'id'), mfaToken: mfaToken(event) });
      return noContent();
    },
    async regenerateRecoveryCodes({ event, principal }) {
      const { recoveryCodes } = await accounts.regenerateRecoveryCodes({ ...callerOf(event, principal), mfaToken: mfaToken(event) });
      return ok({ recovery_codes: recoveryCodes });
    },
    async listMfaEvents({ event, principal }) {
      const page = await accounts.listEvents({ subject: principal.subject, limit: limitParam(event, EVENTS_PAGE.default, EVENTS_PAGE.max), cursor: queryParam(event, 'cursor') });
      return ok({ events: page.events.map(eventBody), next_cursor: page.nextCursor });
    },
    async adminListUserFactors({ event, principal }) {
      return ok(factorsBody(await accounts.adminListFactors({ accountId: principal.accountId, subject: pathParam(event, 'sub'), actor: principal.subject, client: clientOf(event) })));
    },
    async adminResetUserFactors({ event, principal }) {
      await accounts.adminResetFactors({
        accountId: principal.accountId, subject: pathParam(event, 'sub'), actor: principal.subject, mfaToken: mfaToken(event), client: clientOf(event),
        ...(principal.app !== undefined && { app: principal.app }),
      });
      return noContent();
    },
    async createAdminApiKey({ event, principal }) {
      const minted = await accounts.mintAdminApiKey({ ...callerOf(event, principal), mfaToken: mfaToken(event) });
      return created({ id: minted.id, api_key: minted.apiKey, created_at: minted.createdAt, scopes: minted.scopes });
    },
  }, authenticator, {
    async getMfaJwks() {
      return json(200, { keys: await accounts.publicKeys() }, { 'cache-control': `public, max-age=${JWKS_MAX_AGE_SECONDS}` });
    },
  });
}

/** The accounts function over its settings and clients; `now` is for the local stack's tests to step. */
export function composeAccounts(settings: Settings, aws: AwsClients, now: Clock = Date.now) {
  return createAccountsHandler(
    createAccountUseCases({
      mfa: new DynamoMfaStore(dynamoClient(aws), settings.accountsTable),
      attempts: new DynamoAttemptStore(dynamoClient(aws), settings.accountsTable),
      events: new DynamoMfaEventLog(dynamoClient(aws), settings.accountsTable, { now, randomBytes }),
      secretBox: secretBoxFrom(settings, aws),
      signer: tokenSignerFrom(settings, aws),
      proofs: new DynamoProofLedger(dynamoClient(aws), settings.accountsTable),
      keys: new DynamoApiKeyStore(dynamoClient(aws), settings.authTable),
      keyEvents: new DynamoApiKeyEventLog(dynamoClient(aws), settings.authTable, randomBytes),
      now,
      randomBytes,
      issuer: settings.totpIssuer,
      tokenIssuer: settings.mfaTokenIssuer,
    }),
    createGatewayAuthenticator(settings, aws),
  );
}
