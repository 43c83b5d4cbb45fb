/** The API's errors in the console's words (apart from `api.ts`, which keeps the tab's credentials). */
import { DEFAULT_MESSAGE, type ErrorCode } from '../functions/shared/errors.js';

/** The API's error codes in words; anything else falls back to the code itself. */
export const ERROR_WORDS: Record<string, string> = {
  unauthorized: 'Your sign-in was not accepted: the token or API key is wrong or has expired. Sign out and sign in again; on the local stack, npm run token prints a new token.',
  validation_error: 'The service did not accept these settings. Check the fields and try again.',
  invalid_code: 'That code was not accepted. Enter the 6-digit code your authenticator app shows now.',
  already_registered: 'An authenticator is already set up for this account.',
  mfa_required: 'This needs a current code from your authenticator. Enter it and try again.',
  ip_not_allowed: 'The request came from an address the trigger does not allow.',
  invalid_signature: 'The signature was not accepted.',
  not_found: 'It no longer exists: it may have been deleted elsewhere.',
  method_not_allowed: 'The service does not allow that here.',
  conflict: 'It was changed elsewhere at the same time. Reload and try again.',
  already_exists: 'It already exists.',
  too_many_attempts: 'Too many attempts. Wait a minute and try again.',
  payload_too_large: 'That is too large for the service.',
  unsupported_media_type: 'The service did not accept that kind of content.',
  internal_error: 'The service failed unexpectedly. Try again in a moment.',
  unavailable: 'The service is starting or unavailable. Try again in a moment.',
  network: 'The service could not be reached. Check your connection and try again.',
  // Signing in through the Cognito hosted UI (console/pkce.ts).
  sign_in_state: 'The sign-in did not come back to the tab that started it. Start the sign-in again.',
  sign_in_refused: 'The identity provider did not sign you in. Start the sign-in again.',
};

/**
 * An API error in words. `detail` is the API's own `message` when it sends one (a 400 about a
 * signature names the field and what it expected: `signature.secret: …`), told after the words.
 */
export class ApiError extends Error {
  constructor(readonly code: string, readonly status: number, readonly detail?: string) {
    const words = ERROR_WORDS[code] ?? `The service answered "${code}" (HTTP ${status}).`;
    // The code's fixed line says nothing the console's own words do not: only a call's own words are told.
    const own = detail !== undefined && detail !== DEFAULT_MESSAGE[code as ErrorCode] ? detail : undefined;
    super(own ? `${words} It said: ${own}` : words);
  }
}
