import { randomBytes } from 'node:crypto';
import { DynamoAttemptStore } from '../adapters/aws/dynamo-attempt-store.js';
import type { AwsClients } from '../adapters/aws/clients.js';
import { dynamoClient } from '../adapters/aws/clients/dynamo.js';
import { DynamoMfaStore } from '../adapters/aws/dynamo-mfa-store.js';
import { secretBoxFrom } from '../adapters/secret-box.js';
import { createAccountUseCases, type AccountUseCases } from '../domain/accounts/index.js';
import type { Authenticator } from '../domain/authenticator.js';
import type { Settings } from '../settings.js';
import { AppError } from '../shared/errors.js';
import { createHttpHandler } from '../shared/handler.js';
import { jsonObjectBody, ok } from '../shared/http.js';
import { createBearerAuthenticator } from './bearer-auth.js';

/** A required string field; anything else is a 400 `validation_error`, which costs no attempt. */
function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string') throw new AppError('validation_error', `${name} must be a string`);
  return value;
}

/** The accounts routes over the given use cases; every factor belongs to the token's `sub`. */
export function createAccountsHandler(accounts: AccountUseCases, authenticator: Authenticator) {
  return createHttpHandler('accounts', {
    async startTotpRegistration({ principal }) {
      const started = await accounts.startRegistration({ subject: principal.subject });
      return ok({ secret: started.secret, otpauth_uri: started.otpauthUri });
    },
    async confirmTotpRegistration({ event, principal }) {
      const body = jsonObjectBody(event);
      const input = { subject: principal.subject, code: stringField(body, 'code'), secret: stringField(body, 'secret') };
      const { recoveryCodes } = await accounts.confirmRegistration(input);
      return ok({ recovery_codes: recoveryCodes });
    },
    async verifyRecoveryCode({ event, principal }) {
      const code = stringField(jsonObjectBody(event), 'code');
      const { remaining } = await accounts.verifyRecoveryCode({ subject: principal.subject, code });
      return ok({ remaining });
    },
  }, authenticator);
}

/** The accounts function over its settings and clients. */
export function composeAccounts(settings: Settings, aws: AwsClients) {
  return createAccountsHandler(
    createAccountUseCases({
      mfa: new DynamoMfaStore(dynamoClient(aws), settings.accountsTable),
      attempts: new DynamoAttemptStore(dynamoClient(aws), settings.accountsTable),
      secretBox: secretBoxFrom(settings, aws),
      now: Date.now,
      randomBytes,
      issuer: settings.totpIssuer,
    }),
    createBearerAuthenticator(settings),
  );
}
