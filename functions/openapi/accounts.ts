import { dataBody, errorBody, type OperationDocs, type Schema } from './types.js';

const OWNERSHIP =
  'The factor belongs to the user, not the account: it is keyed by the bearer token\'s `sub`, so users sharing an ' +
  'account each register their own authenticator. A user\'s JWT only; an `X-Api-Key` is refused with 401.';

const RETRY_AFTER: Record<string, Schema> = {
  'retry-after': { type: 'integer', minimum: 1, description: 'Seconds until the oldest counted failure leaves the 15-minute window.' },
};

const tooManyAttempts = (what: string) => ({
  ...errorBody(`too_many_attempts: 5 ${what} by this user (sub) within 15 minutes; retry after the Retry-After seconds.`),
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
      'Makes a new 160-bit TOTP secret (SHA-1, 6 digits, 30 s) and its `otpauth://` URI for a QR code. Nothing is ' +
      'stored: the registration takes effect when `confirmTotpRegistration` receives the secret and a code made ' +
      'from it, and a client may equally confirm a secret it made itself. The URI\'s issuer is the service\'s ' +
      'configured name and its account name is the `sub` (colons shown as underscores). No request body. ' +
      OWNERSHIP,
    responses: {
      '200': dataBody('A secret to register', {
        type: 'object',
        required: ['secret', 'otpauth_uri'],
        properties: {
          secret: { type: 'string', pattern: '^[A-Z2-7]{32}$', description: 'RFC 4648 base32, unpadded: 160 bits.' },
          otpauth_uri: { type: 'string', format: 'uri', description: '`otpauth://totp/Issuer:sub?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30`' },
        },
      }),
      '409': errorBody('already_registered: this user already has a confirmed TOTP factor.'),
    },
  },

  confirmTotpRegistration: {
    description:
      'Stores a TOTP factor for the caller when `code` matches `secret` at the current 30-second step or one step ' +
      'either side, and returns 10 recovery codes, shown only this once. The secret is stored encrypted; recovery ' +
      'codes only as hashes; the time step of the accepted code is recorded so that it is never accepted again. ' +
      'Checks, in order: media type (415) and body (400 `validation_error`), which cost no attempt; an existing ' +
      'factor (409, before any code is checked, so it costs no attempt either); the failure budget (429); the code ' +
      '(400 `invalid_code`, one failure). Of concurrent confirmations for one user exactly one succeeds; the others ' +
      'get 409. ' + OWNERSHIP,
    requestBody: jsonBody({
      code: { type: 'string', pattern: '^[0-9]{6}$', description: 'The code the authenticator app shows.' },
      secret: {
        type: 'string',
        description: 'RFC 4648 base32 (case-insensitive, padding optional, spaces ignored) of 16 to 64 bytes.',
      },
    }),
    responses: {
      '200': dataBody('Registered', {
        type: 'object',
        required: ['recovery_codes'],
        properties: {
          recovery_codes: {
            type: 'array',
            minItems: 10,
            maxItems: 10,
            items: { type: 'string', pattern: '^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$' },
            description: '10 single-use codes of 50 random bits each (Crockford base32). Not retrievable later.',
          },
        },
      }),
      '400': errorBody(
        '`validation_error`: body not a JSON object, `code` or `secret` missing or not a string, `code` not 6 digits, ' +
        '`secret` not base32 or not 16–64 bytes (not counted as an attempt). `invalid_code`: the code does not match ' +
        'the secret within one step (counted).',
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
        properties: { remaining: { type: 'integer', minimum: 0, maximum: 9, description: 'Unused recovery codes left.' } },
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
