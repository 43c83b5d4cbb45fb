/** Seconds per TOTP time step (RFC 6238 default, what authenticator apps assume). */
export const TOTP_PERIOD_SECONDS = 30;

/** Digits per TOTP code. */
export const TOTP_DIGITS = 6;

/** A code as typed: exactly {@link TOTP_DIGITS} ASCII digits (no spaces, no other scripts' digits). */
export const TOTP_CODE_PATTERN = new RegExp(`^[0-9]{${TOTP_DIGITS}}$`);

/** Time steps accepted either side of the current one, for clock drift and typing time. */
export const TOTP_ALLOWED_DRIFT_STEPS = 1;

/** Shortest accepted secret, in bytes (RFC 4226 section 4, R6: at least 128 bits). */
export const MIN_SECRET_BYTES = 16;

/** Longest accepted secret, in bytes: otplib refuses longer keys, so they must fail at registration. */
export const MAX_SECRET_BYTES = 64;

/** Bytes of a generated secret: 160 bits, the SHA-1 block-friendly size RFC 4226 recommends. */
export const GENERATED_SECRET_BYTES = 20;
