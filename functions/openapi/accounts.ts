import {
  GENERATED_SECRET_BYTES, MAX_SECRET_BYTES, MIN_SECRET_BYTES, TOTP_CODE_PATTERN, TOTP_DIGITS, TOTP_PERIOD_SECONDS,
} from '../domain/totp/constants.js';
import { RECOVERY_CODE_COUNT } from '../domain/totp/recovery-codes.js';
import { ATTEMPT_WINDOW_SECONDS, MAX_FAILED_ATTEMPTS } from '../domain/totp/throttle.js';
import { dataBody, errorBody, type OperationDocs, type Schema } from './types.js';

const WINDOW_MINUTES = ATTEMPT_WINDOW_SECONDS / 60;
/** Unpadded base32 carries 5 bits a character. */
const GENERATED_SECRET_CHARS = Math.ceil((GENERATED_SECRET_BYTES * 8) / 5);

const OWNERSHIP =
  'The factor belongs to the user, not the account: it is keyed by the bearer token\'s `sub`, so users sharing an ' +
  'account each register their own authenticator. A user\'s JWT only; an `X-Api-Key` is refused with 401.';

const RETRY_AFTER: Record<string, Schema> = {
  'retry-after': { type: 'integer', minimum: 1, description: `Seconds until the oldest counted failure leaves the ${WINDOW_MINUTES}-minute window.` },
};

const tooManyAttempts = (what: string) => ({
  ...errorBody(`too_many_attempts: ${MAX_FAILED_ATTEMPTS} ${what} by this user (sub) within ${WINDOW_MINUTES} minutes; retry after the Retry-After seconds.`),
  headers: RETRY_AFTER,
});

const jsonBody = (properties: Record<string, Schema>): { required: true; content: Record<string, Schema> } => ({
  required: true,
  content: { 'application/json': { type: 'object', required: Object.keys(properties), properties } },
});

const unsupportedMediaType = errorBody('unsupported_media_type: the body must be sent as `application/json`.');

export const accountsDocs: OperationDocs = {
  startTotpRegistration: {
    description:
      `Makes a new ${GENERATED_SECRET_BYTES * 8}-bit TOTP secret (SHA-1, ${TOTP_DIGITS} digits, ${TOTP_PERIOD_SECONDS} s) and its \`otpauth://\` URI for a QR code. Nothing is ` +
      'stored: the registration takes effect when `confirmTotpRegistration` receives the secret and a code made ' +
      'from it, and a client may equally confirm a secret it made itself. The URI\'s issuer is the service\'s ' +
      'configured name and its account name is the `sub` (colons shown as underscores). No request body. ' +
      OWNERSHIP,
    responses: {
      '200': dataBody('A secret to register', {
        type: 'object',
        required: ['secret', 'otpauth_uri'],
        properties: {
          secret: { type: 'string', pattern: `^[A-Z2-7]{${GENERATED_SECRET_CHARS}}$`, description: `RFC 4648 base32, unpadded: ${GENERATED_SECRET_BYTES * 8} bits.` },
          otpauth_uri: { type: 'string', format: 'uri', description: `\`otpauth://totp/Issuer:sub?secret=…&issuer=…&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_PERIOD_SECONDS}\`` },
        },
      }),
      '409': errorBody('already_registered: this user already has a confirmed TOTP factor.'),
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
      'get 409. ' + OWNERSHIP,
    requestBody: jsonBody({
      code: { type: 'string', pattern: TOTP_CODE_PATTERN.source, description: 'The code the authenticator app shows.' },
      secret: {
        type: 'string',
        description: `RFC 4648 base32 (case-insensitive, padding optional, spaces ignored) of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes.`,
      },
    }),
    responses: {
      '200': dataBody('Registered', {
        type: 'object',
        required: ['recovery_codes'],
        properties: {
          recovery_codes: {
            type: 'array',
            minItems: RECOVERY_CODE_COUNT,
            maxItems: RECOVERY_CODE_COUNT,
            items: { type: 'string', pattern: '^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$' },
            description: `${RECOVERY_CODE_COUNT} single-use codes of 50 random bits each (Crockford base32). Not retrievable later.`,
          },
        },
      }),
      '400': errorBody(
        '`validation_error`: body not a JSON object, `code` or `secret` missing or not a string, ' +
        `\`code\` not ${TOTP_DIGITS} digits, \`secret\` not base32 or not ${MIN_SECRET_BYTES}–${MAX_SECRET_BYTES} bytes (not counted as an attempt). ` +
        '`invalid_code`: the code does not match the secret within one step (counted).',
      ),
      '409': errorBody('already_registered: this user already has a confirmed TOTP factor.'),
      '415': unsupportedMediaType,
      '429': tooManyAttempts('failed codes'),
    },
  },

  verifyRecoveryCode: {
    description:
      'Uses up one of the caller\'s recovery codes: each works once. Case, spaces and dashes are ignored, and ' +
      '`i`, `l`, `o` are read as `1`, `1`, `0`. A wrong or already used code, or a caller without a TOTP factor, ' +
      'is 400 `invalid_code` and counts as a failure; failures are counted separately from TOTP code failures. ' +
      'A string that is not in recovery-code form is also `invalid_code` but costs no attempt. ' + OWNERSHIP,
    requestBody: jsonBody({ code: { type: 'string', description: 'A recovery code, e.g. `7k3mq-x9d2a`.' } }),
    responses: {
      '200': dataBody('The code was valid and is now used up', {
        type: 'object',
        required: ['remaining'],
        properties: { remaining: { type: 'integer', minimum: 0, maximum: RECOVERY_CODE_COUNT - 1, description: 'Unused recovery codes left.' } },
      }),
      '400': errorBody(
        '`validation_error`: body not a JSON object, or `code` missing or not a string. `invalid_code`: not an unused ' +
        'recovery code of this user.',
      ),
      '415': unsupportedMediaType,
      '429': tooManyAttempts('failed recovery codes'),
    },
  },
};
