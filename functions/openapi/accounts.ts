import {
  GENERATED_SECRET_BYTES, MAX_SECRET_BYTES, MIN_SECRET_BYTES, TOTP_CODE_PATTERN, TOTP_DIGITS, TOTP_PERIOD_SECONDS,
} from '../domain/totp/constants.js';
import { RECOVERY_CODE_COUNT } from '../domain/totp/recovery-codes.js';
import { ATTEMPT_WINDOW_SECONDS, MAX_FAILED_ATTEMPTS } from '../domain/totp/throttle.js';
import { DAILY_WINDOW_SECONDS, MAX_DAILY_TOTP_FAILURES, MAX_FAILED_ATTEMPTS_ACROSS_BUDGETS } from '../domain/accounts/attempt-budget.js';
import { MFA_TOKEN_TTL_SECONDS, PROOF_PURPOSES } from '../domain/accounts/mfa-token.js';
import { MAX_FACTORS, MAX_FACTOR_NAME_LENGTH, MFA_EVENT_RETENTION_DAYS } from '../domain/accounts/ports.js';
import { dataBody, errorBody, named, pageBody, pageParameters, type OperationDocs, type Schema } from './types.js';

const WINDOW_MINUTES = ATTEMPT_WINDOW_SECONDS / 60;
/** Unpadded base32 carries 5 bits a character. */
const GENERATED_SECRET_CHARS = Math.ceil((GENERATED_SECRET_BYTES * 8) / 5);

const OWNERSHIP =
  'The factor belongs to the user, not the account: it is keyed by the bearer token\'s `sub`, so users sharing an ' +
  'account each register their own authenticator. A user\'s JWT only; an `X-Api-Key` is refused with 401.';

const DAY_HOURS = DAILY_WINDOW_SECONDS / 3600;

const RETRY_AFTER: Record<string, Schema> = {
  'retry-after': { type: 'integer', minimum: 1, description: `Seconds until the budget that refuses has room again: the oldest counted failure leaves the ${WINDOW_MINUTES}-minute window, or, after ${MAX_DAILY_TOTP_FAILURES} TOTP failures, the ${DAY_HOURS}-hour one.` },
};

const BUDGET =
  `One failure budget covers every check of a TOTP code or step-up proof (confirm, verify, factor removal, ` +
  `regeneration, a further registration): ${MAX_FAILED_ATTEMPTS} failures within ${WINDOW_MINUTES} minutes, then 429, and at most ` +
  `${MAX_DAILY_TOTP_FAILURES} within ${DAY_HOURS} hours (rolling), after which TOTP codes are refused until the oldest of them is ${DAY_HOURS} hours old. ` +
  `A success gives nothing back. Recovery codes have a budget of their own (${MAX_FAILED_ATTEMPTS} failures within ${WINDOW_MINUTES} minutes, never ` +
  `escalating), so a locked TOTP never blocks the rescue path, and a ceiling of ${MAX_FAILED_ATTEMPTS_ACROSS_BUDGETS} failures within ${WINDOW_MINUTES} minutes ` +
  `across both stops an attacker alternating between them. A proof that holds is not a guess: it is accepted while TOTP is locked. Only failures count.`;

/** `daily`: the route spends the TOTP budget, which also caps failures a day (recovery codes' does not). */
const tooManyAttempts = (what: string, daily = true) => ({
  ...errorBody(`too_many_attempts: ${MAX_FAILED_ATTEMPTS} ${what} by this user (sub) within ${WINDOW_MINUTES} minutes, ` +
    `${daily ? `${MAX_DAILY_TOTP_FAILURES} within ${DAY_HOURS} hours, ` : ''}or ${MAX_FAILED_ATTEMPTS_ACROSS_BUDGETS} failures within ${WINDOW_MINUTES} minutes across the TOTP and recovery budgets; retry after the Retry-After seconds.`),
  headers: RETRY_AFTER,
});

/** A proof that could not be signed (KMS throttled or failing): nothing was spent. */
const signingUnavailable = (what: string) => ({
  ...errorBody(`unavailable: the step-up proof could not be signed (a server-side failure). The ${what} was not spent and no attempt was counted: send the same code again after Retry-After.`),
  headers: { 'retry-after': { type: 'integer', minimum: 1, description: 'Seconds to wait before sending the same code again.' } } as Record<string, Schema>,
});

const MFA_TOKEN_HEADER = {
  name: 'X-MFA-Token', in: 'header' as const,
  description: `A step-up proof: the \`mfa_token\` of \`verifyTotp\` or \`verifyRecoveryCode\`, no older than ${MFA_TOKEN_TTL_SECONDS / 60} minutes, of the same user, asked for with the \`purpose\` this operation names; a proof for a sensitive operation serves once.`,
  schema: { type: 'string' },
};
/** The header of an operation that takes (and spends) a proof for `purpose`. */
const proofHeader = (purpose: string, required = true) => ({
  ...MFA_TOKEN_HEADER, required,
  description: `${MFA_TOKEN_HEADER.description} Here: \`purpose\` \`${purpose}\`, spent by this request.`,
});
const mfaRequired = errorBody(
  `mfa_required: no \`X-MFA-Token\`, or one that is not a fresh proof of this user (forged, expired, another user's or app's, made for another purpose, already used). A proof that was sent but does not hold counts as a failure of the TOTP budget and is recorded in the user's MFA events.`,
);

const PROOF_PROPERTIES: Record<string, Schema> = {
  mfa_token: {
    type: 'string',
    description:
      `A compact JWS (ES256) with \`iss\` (the gateway's base URL), \`aud\` (the app the caller's token was issued to: its \`client_id\`, else its \`aud\`, else the issuer), \`sub\`, \`account_id\`, \`amr\` (\`["otp"]\` or \`["recovery_code"]\`), ` +
      `\`auth_time\`, \`iat\`, \`exp\` (${MFA_TOKEN_TTL_SECONDS / 60} minutes later), \`jti\` and \`purpose\`. Check it offline against \`GET /.well-known/jwks.json\` (and its \`aud\` against your app); send it as \`X-MFA-Token\` to the operation its purpose names, once.`,
  },
  expires_at: { type: 'string', format: 'date-time', description: 'When the proof expires (its `exp`).' },
};

const FACTOR: Schema = named('Factor', {
  type: 'object',
  required: ['id', 'type', 'name', 'created_at', 'last_used_at'],
  properties: {
    id: { type: 'string' },
    type: { type: 'string', const: 'totp' },
    name: { type: 'string', maxLength: MAX_FACTOR_NAME_LENGTH },
    created_at: { type: 'string', format: 'date-time' },
    last_used_at: { type: ['string', 'null'], format: 'date-time', description: 'The last accepted `verifyTotp` code; null before the first.' },
  },
});
const FACTORS_BODY = dataBody('The factors, oldest first', named('Factors', {
  type: 'object',
  required: ['factors', 'recovery_codes_remaining'],
  properties: {
    factors: { type: 'array', maxItems: MAX_FACTORS, items: FACTOR },
    recovery_codes_remaining: { type: 'integer', minimum: 0, maximum: RECOVERY_CODE_COUNT },
  },
}));
const RECOVERY_CODES: Schema = {
  type: 'array',
  items: { type: 'string', pattern: '^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$' },
};
const EVENT: Schema = named('MfaEvent', {
  type: 'object',
  required: ['type', 'at', 'factor_id', 'source_ip', 'user_agent'],
  properties: {
    type: { type: 'string', enum: ['factor_enrolled', 'verification_succeeded', 'verification_failed', 'locked_out', 'factor_removed', 'recovery_codes_regenerated', 'recovery_code_used', 'recovery_code_failed', 'admin_reset', 'factors_listed_by_admin'] },
    at: { type: 'string', format: 'date-time' },
    factor_id: { type: ['string', 'null'] },
    source_ip: { type: ['string', 'null'] },
    user_agent: { type: ['string', 'null'], maxLength: 256 },
    actor: { type: 'string', description: 'Who acted when not the user: the administrator\'s `sub` for an admin reset; `apikey:<id>` or a `sub` for `factors_listed_by_admin`.' },
  },
});
const ADMIN =
  "An `admin` API key of the account, or a token of an administrator (`ADMIN_GROUP` in its `cognito:groups` or `groups`); anything else is 403 `forbidden`. A user who is not " +
  "the account's (its tokens' `account_id` when the first factor was confirmed), or has no factor, is 404 alike.";
const PURPOSE_FIELD: Record<string, Schema> = {
  purpose: {
    type: 'string', enum: [...PROOF_PURPOSES], default: 'sign_in',
    description: 'What the proof is for. `sign_in` (default) proves a second factor to relying services and lets a further registration start; ' +
      'each other purpose is accepted by its one operation only, once: `add_factor` (confirmTotpRegistration), `remove_factor`, `regenerate_recovery_codes`, ' +
      '`mint_admin_key` (createAdminApiKey), `admin_reset` (adminResetUserFactors).',
  },
};
const SUB_PARAMETER = { name: 'sub', in: 'path' as const, description: "The user's `sub`, URL-encoded.", schema: { type: 'string' } };

const jsonBody = (properties: Record<string, Schema>, optional: Record<string, Schema> = {}): { required: true; content: Record<string, Schema> } => ({
  required: true,
  content: { 'application/json': { type: 'object', required: Object.keys(properties), properties: { ...properties, ...optional } } },
});

const unsupportedMediaType = errorBody('unsupported_media_type: the body must be sent as `application/json`.');

export const accountsDocs: OperationDocs = {
  createAdminApiKey: {
    description:
      'Mints an API key with the `admin` scope (every scope, and `adminListUserFactors`; never key management nor a change to a factor). ' +
      'Only an administrator (`ADMIN_GROUP` in the token\'s `cognito:groups` or `groups`) with a fresh step-up proof of its own for ' +
      '`mint_admin_key`, spent by this request. Recorded in `listApiKeyEvents` with who minted it. No request body.',
    parameters: [proofHeader('mint_admin_key')],
    responses: {
      '201': dataBody('Created; the key is shown only here', named('AdminApiKey', {
        type: 'object', required: ['id', 'api_key', 'created_at', 'scopes'],
        properties: { id: { type: 'string' }, api_key: { type: 'string' }, created_at: { type: 'string', format: 'date-time' }, scopes: { type: 'array', items: { const: 'admin' } } },
      })),
      '403': errorBody('forbidden: the caller is not an administrator. mfa_required: no fresh, unused proof of the caller for `mint_admin_key`.'),
      '429': tooManyAttempts('failed codes or proofs'),
    },
  },

  startTotpRegistration: {
    description:
      `Makes a new ${GENERATED_SECRET_BYTES * 8}-bit TOTP secret (SHA-1, ${TOTP_DIGITS} digits, ${TOTP_PERIOD_SECONDS} s) and its \`otpauth://\` URI for a QR code. Nothing is ` +
      'stored: the registration takes effect when `confirmTotpRegistration` receives the secret and a code made ' +
      'from it, and a client may equally confirm a secret it made itself. The URI\'s issuer is the service\'s ' +
      'configured name and its account name is the `sub` (colons shown as underscores). No request body. A user who ' +
      'already has a factor starts another (up to ' + MAX_FACTORS + ') only with a fresh step-up proof in `X-MFA-Token`. ' +
      OWNERSHIP,
    parameters: [{ ...MFA_TOKEN_HEADER, description: `Required when the user already has a factor. ${MFA_TOKEN_HEADER.description} Here: \`sign_in\` or \`add_factor\`, checked, not spent.` }],
    responses: {
      '200': dataBody('A secret to register', named('TotpRegistration', {
        type: 'object',
        required: ['secret', 'otpauth_uri'],
        properties: {
          secret: { type: 'string', pattern: `^[A-Z2-7]{${GENERATED_SECRET_CHARS}}$`, description: `RFC 4648 base32, unpadded: ${GENERATED_SECRET_BYTES * 8} bits.` },
          otpauth_uri: { type: 'string', format: 'uri', description: `\`otpauth://totp/Issuer:sub?secret=…&issuer=…&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_PERIOD_SECONDS}\`` },
        },
      })),
      '403': mfaRequired,
      '409': errorBody('already_registered: this user already has a confirmed TOTP factor and sent no `X-MFA-Token`.'),
      '429': tooManyAttempts('failed codes or proofs'),
    },
  },

  confirmTotpRegistration: {
    description:
      `Stores a TOTP factor for the caller when \`code\` matches \`secret\` at the current ${TOTP_PERIOD_SECONDS}-second step or one step ` +
      `either side, and returns ${RECOVERY_CODE_COUNT} recovery codes, shown only this once. The secret is stored encrypted; recovery ` +
      'codes only as hashes; the time step of the accepted code is recorded so that it is never accepted again. ' +
      'Checks, in order: media type (415) and body (400 `validation_error`), which cost no attempt; an existing ' +
      'factor (409, before any code is checked, so it costs no attempt either); the failure budget (429); the code ' +
      '(400 `invalid_code`, one failure). Of concurrent confirmations for one user exactly one succeeds; the others ' +
      'get 409. ' +
      `A user who already has a factor adds another (up to ${MAX_FACTORS}) only with a fresh step-up proof in \`X-MFA-Token\`, so a ` +
      'stolen bearer token cannot add an attacker\'s authenticator; without one the answer stays 409 `already_registered`. Recovery ' +
      'codes come with the first factor only: a later confirmation answers `{"factor_id": …, "recovery_codes": []}` and leaves the ' +
      'codes as they are (`regenerateRecoveryCodes` issues new ones). ' + BUDGET + ' ' + OWNERSHIP,
    parameters: [{ ...proofHeader('add_factor', false), description: `Required to add a factor beside an existing one. ${proofHeader('add_factor').description} (once the code holds)` }],
    requestBody: jsonBody({
      code: { type: 'string', pattern: TOTP_CODE_PATTERN.source, description: 'The code the authenticator app shows.' },
      secret: {
        type: 'string',
        description: `RFC 4648 base32 (case-insensitive, padding optional, spaces ignored) of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes.`,
      },
    }, {
      name: { type: 'string', minLength: 1, maxLength: MAX_FACTOR_NAME_LENGTH, description: 'What the user calls the device (default `Authenticator`); trimmed, no control characters.' },
    }),
    responses: {
      // Inline, not named: api-smart-diff 1.0.6 normalises an `anyOf` behind a `$ref` otherwise than inline (a spurious break).
      '200': dataBody('Registered', {
        type: 'object',
        required: ['factor_id', 'recovery_codes'],
        properties: {
          recovery_codes: {
            ...RECOVERY_CODES,
            anyOf: [{ minItems: RECOVERY_CODE_COUNT, maxItems: RECOVERY_CODE_COUNT }, { maxItems: 0 }],
            description: `With the first factor: ${RECOVERY_CODE_COUNT} single-use codes of 50 random bits each (Crockford base32), not retrievable later. With a later one: empty.`,
          },
          factor_id: { type: 'string', description: 'The added factor (the first one too).' },
        },
      }),
      '400': errorBody(
        '`validation_error`: body not a JSON object, `code` or `secret` missing or not a string, ' +
        `\`code\` not ${TOTP_DIGITS} digits, \`secret\` not base32 or not ${MIN_SECRET_BYTES}–${MAX_SECRET_BYTES} bytes (not counted as an attempt). ` +
        '`invalid_code`: the code does not match the secret within one step (counted). `validation_error` also for a `name` ' +
        `that is empty, longer than ${MAX_FACTOR_NAME_LENGTH} characters or holds control characters.`,
      ),
      '403': mfaRequired,
      '409': errorBody(`already_registered: this user already has a confirmed TOTP factor and sent no \`X-MFA-Token\`. conflict: the user already has ${MAX_FACTORS} factors.`),
      '415': unsupportedMediaType,
      '429': tooManyAttempts('failed codes'),
    },
  },

  verifyRecoveryCode: {
    description:
      'Uses up one of the caller\'s recovery codes, each works once, and answers a step-up proof (`amr: ["recovery_code"]`): ' +
      'the rescue path when the authenticator is lost. Case, spaces and dashes are ignored, and ' +
      '`i`, `l`, `o` are read as `1`, `1`, `0`. A wrong or already used code, or a caller without a TOTP factor, ' +
      'is 401 `invalid_code`, as a wrong TOTP code is at `verifyTotp`, and counts as a failure; failures are counted separately from TOTP code failures. ' +
      'A string that is not in recovery-code form is also `invalid_code` but costs no attempt. ' + OWNERSHIP,
    requestBody: jsonBody({ code: { type: 'string', description: 'A recovery code, e.g. `7k3mq-x9d2a`.' } }, PURPOSE_FIELD),
    responses: {
      '200': dataBody('The code was valid and is now used up', named('RecoveryCodeProof', {
        type: 'object',
        required: ['remaining', 'mfa_token', 'expires_at'],
        properties: { remaining: { type: 'integer', minimum: 0, maximum: RECOVERY_CODE_COUNT - 1, description: 'Unused recovery codes left.' }, ...PROOF_PROPERTIES },
      })),
      '400': errorBody('`validation_error`: body not a JSON object, or `code` missing or not a string.'),
      '401': errorBody('unauthorized: no valid bearer token. invalid_code: not an unused recovery code of this user (counted unless not in recovery-code form).'),
      '415': unsupportedMediaType,
      '429': tooManyAttempts('failed recovery codes', false),
      '503': signingUnavailable('recovery code'),
    },
  },

  verifyTotp: {
    description:
      'Checks a code from one of the caller\'s authenticators, at sign-in or before a sensitive action, and answers a step-up ' +
      'proof. The code must belong to a time step later than the last one accepted for that factor: the step is recorded with ' +
      'one conditional write, so a code works once, two concurrent requests with one code give one success, and neither the ' +
      'enrolment code nor an older one is ever accepted. `factor_id` limits the check to one factor; without it every factor ' +
      'of the user is tried. ' + BUDGET + ' ' + OWNERSHIP,
    requestBody: jsonBody(
      { code: { type: 'string', pattern: TOTP_CODE_PATTERN.source, description: 'The code the authenticator app shows.' } },
      { factor_id: { type: 'string', description: 'Check against this factor only.' }, ...PURPOSE_FIELD },
    ),
    responses: {
      '200': dataBody('The code was accepted', named('TotpProof', { type: 'object', required: ['mfa_token', 'expires_at', 'factor_id'], properties: { ...PROOF_PROPERTIES, factor_id: { type: 'string', description: 'The factor that accepted the code.' } } })),
      '400': errorBody(`validation_error: body not a JSON object, \`code\` missing or not ${TOTP_DIGITS} digits, \`factor_id\` not a string (not counted).`),
      '401': errorBody('unauthorized: no valid bearer token. invalid_code: a wrong, reused or old code, an unknown `factor_id`, or a user without a factor (counted).'),
      '415': unsupportedMediaType,
      '429': tooManyAttempts('failed codes or proofs'),
      '503': signingUnavailable('code'),
    },
  },

  listFactors: {
    description: 'The caller\'s TOTP factors (never their secrets) and how many unused recovery codes remain. ' + OWNERSHIP,
    responses: { '200': FACTORS_BODY },
  },

  removeFactor: {
    description:
      'Removes one of the caller\'s factors (a lost phone). Requires a fresh step-up proof in `X-MFA-Token`, so a stolen bearer ' +
      'token cannot remove the user\'s protection. Removing the last factor removes the recovery codes with it. ' + OWNERSHIP,
    parameters: [proofHeader('remove_factor'), { name: 'id', in: 'path', description: 'The factor\'s `id` from `listFactors`.', schema: { type: 'string' } }],
    responses: {
      '204': { description: 'Removed' },
      '403': mfaRequired,
      '404': errorBody('not_found: the caller has no factor of this id (another user\'s factor is not found either).'),
      '429': tooManyAttempts('failed codes or proofs'),
    },
  },

  regenerateRecoveryCodes: {
    description:
      `Issues ${RECOVERY_CODE_COUNT} new recovery codes, shown only this once; the old set stops working in the same write. Requires a ` +
      'fresh step-up proof in `X-MFA-Token`. No request body. ' + OWNERSHIP,
    parameters: [proofHeader('regenerate_recovery_codes')],
    responses: {
      '200': dataBody('The new codes', named('RecoveryCodes', { type: 'object', required: ['recovery_codes'], properties: { recovery_codes: { ...RECOVERY_CODES, minItems: RECOVERY_CODE_COUNT, maxItems: RECOVERY_CODE_COUNT } } })),
      '403': mfaRequired,
      '404': errorBody('not_found: the caller has no factor, hence no recovery codes to replace.'),
      '429': tooManyAttempts('failed codes or proofs'),
    },
  },

  listMfaEvents: {
    description:
      'The caller\'s own MFA events, newest first: every enrolment, verification (success and failure), lockout, removal, ' +
      `regeneration, recovery-code use and admin reset, with its time, factor, source address and user agent. Never a code, a secret or a token. Kept ${MFA_EVENT_RETENTION_DAYS} days. ` +
      OWNERSHIP,
    parameters: pageParameters('Events', { max: 100, default: 20 }),
    responses: {
      '200': pageBody('A page of events', 'events', EVENT),
      '400': errorBody('validation_error: `limit` out of range or a malformed `cursor`.'),
    },
  },

  adminListUserFactors: {
    description: 'One of the account\'s users\' factors, as `listFactors` shows them to the user; recorded in the user\'s events as `factors_listed_by_admin` with who looked. ' + ADMIN,
    parameters: [SUB_PARAMETER],
    responses: { '200': FACTORS_BODY, '404': errorBody('not_found: not a user of this account with a factor.') },
  },

  adminResetUserFactors: {
    description:
      'Removes every factor and recovery code of one of the account\'s users (a user who lost both), recorded in the user\'s ' +
      'events as `admin_reset` with the administrator\'s `sub` as `actor`. The user can then register again. Only an administrator\'s ' +
      'token (`ADMIN_GROUP`; never an API key, 401) with a fresh step-up proof of the administrator for `admin_reset`, spent by it. A user who is not the account\'s, or has no factor, is 404.',
    parameters: [proofHeader('admin_reset'), SUB_PARAMETER],
    responses: {
      '204': { description: 'Removed' },
      '403': errorBody('forbidden: the caller is not an administrator. mfa_required: no fresh, unused proof of the administrator for `admin_reset`.'),
      '404': errorBody('not_found: not a user of this account with a factor.'),
      '429': tooManyAttempts('failed codes or proofs'),
    },
  },

  getMfaJwks: {
    description:
      'The public keys step-up proofs (`mfa_token`) are signed with, as a JWK Set (RFC 7517): P-256, `alg` ES256, each with its ' +
      '`kid` (its RFC 7638 thumbprint). The first key signs; after a rotation the previous key stays listed until the proofs it ' +
      'signed have expired. No credentials. Cacheable for 5 minutes.',
    responses: {
      '200': {
        description: 'The JWK Set',
        headers: { 'cache-control': { type: 'string' } },
        content: {
          'application/json': {
            type: 'object',
            required: ['keys'],
            properties: {
              keys: {
                type: 'array',
                minItems: 1,
                items: {
                  type: 'object',
                  required: ['kty', 'crv', 'x', 'y', 'kid', 'alg', 'use'],
                  properties: { kty: { const: 'EC' }, crv: { const: 'P-256' }, x: { type: 'string' }, y: { type: 'string' }, kid: { type: 'string' }, alg: { const: 'ES256' }, use: { const: 'sig' } },
                },
              },
            },
          },
        },
      },
    },
  },
};
