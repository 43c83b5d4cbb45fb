// What a user pastes as `signature.secret` is checked when the trigger is saved, so a value that
// could never verify is a 400 naming the expected form rather than a stream of 401s later.
import type { HmacParams, Primitive, SenderRow, Verification } from './catalog-types.js';
import { checkEcdsaP256Secret } from './primitives/ecdsa.js';
import { checkEd25519Secret } from './primitives/ed25519.js';
import { keyBytes } from './primitives/hmac.js';
import { checkJwtSecret } from './primitives/jwt.js';
import { checkBasicSecret, checkStaticTokenSecret } from './primitives/token.js';
import { checkX509RsaSecret } from './primitives/x509-rsa.js';

/** The prefix of Standard Webhooks and Svix signing secrets, stripped before the base64 key. */
const WHSEC_PREFIX = 'whsec_';
/**
 * The shortest key a `whsec_` secret may decode to. The Standard Webhooks specification asks for
 * 24 to 64 bytes and Svix (Resend, Clerk) issues 24, so anything shorter was mistyped or cut off;
 * the trigger settings have refused shorter standard_webhooks secrets from the start.
 */
export const WHSEC_MIN_KEY_BYTES = 24;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

type SecretCheck<P extends Primitive> = (params: Extract<Verification, { primitive: P }>, secret: string, row: SenderRow) => string | undefined;

/** One check per primitive, beside the verifier table of verify.ts: a row's parameters say the rest. */
const SECRET_CHECKS: { readonly [P in Primitive]: SecretCheck<P> } = {
  hmac: (params, secret) => checkHmacSecret(params, secret),
  ed25519: (_params, secret) => checkEd25519Secret(secret),
  ecdsa_p256: (_params, secret) => checkEcdsaP256Secret(secret),
  x509_rsa: (params, secret) => checkX509RsaSecret(secret, params),
  jwt: (params, secret) => checkJwtSecret(secret, params),
  static_token: (params, secret) => checkStaticTokenSecret(secret, params),
  basic: (_params, secret) => checkBasicSecret(secret),
  // Usable when one scheme takes it; otherwise every scheme's reason, so the user sees each form.
  any_of: (params, secret, row) => {
    const reasons = params.schemes.map((scheme) => (SECRET_CHECKS[scheme.primitive] as SecretCheck<Primitive>)(scheme as never, secret, row));
    return reasons.includes(undefined) ? undefined : reasons.join('; or ');
  },
  // The bare `custom` row: its settings are not known here (`customRow(params)` checks the key as they say), so the key is text.
  configured: (_params, secret) => checkTextKey(secret),
  unsupported: (params, _secret, row) => `${row.name} cannot be verified here: ${params.reason}`,
};

/**
 * Why `secret`, pasted for `row`, could never verify one of its sender's requests, in words that
 * name the form expected (Discord: 64 hex characters; a topic ARN; `Name: value`; `whsec_…`); or
 * `undefined` when it is usable. It cannot tell a wrong key from the right one, only a value of the
 * wrong form. Never throws.
 */
export function checkSenderSecret(row: SenderRow, secret: string): string | undefined {
  if (typeof secret !== 'string' || secret.length === 0) return 'the secret is empty';
  if (row.secret_prefix !== undefined && !secret.startsWith(row.secret_prefix)) {
    return `${row.name}'s secret is ${lowerFirst(row.secret_label)}: it starts with ${row.secret_prefix}, and this one does not`;
  }
  const check = SECRET_CHECKS[row.verification.primitive] as SecretCheck<Primitive>;
  return check(row.verification as never, secret, row);
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/** The HMAC key rules: text used as is, or a key that decodes as the row says (hex, base64, `whsec_` base64). */
function checkHmacSecret(params: HmacParams, secret: string): string | undefined {
  const { key } = params;
  switch (key.format) {
    case 'text':
    case 'sha1_of_text':
      return checkTextKey(secret);
    case 'hex':
      return keyBytes(key, secret)?.length ? undefined : 'the key is hex: an even number of the characters 0-9 and A-F, with nothing around it';
    case 'base64': {
      const bytes = keyBytes(key, secret);
      if (key.strip_prefix === WHSEC_PREFIX) {
        return bytes && bytes.length >= WHSEC_MIN_KEY_BYTES
          ? undefined
          : `the signing secret is whsec_ followed by base64 (A-Z, a-z, 0-9, + and /) of at least ${WHSEC_MIN_KEY_BYTES} bytes, as the sender shows it`;
      }
      const after = key.strip_prefix === undefined ? '' : ` (after an optional ${key.strip_prefix})`;
      return bytes?.length ? undefined : `the key is base64${after}: the characters A-Z, a-z, 0-9, + and / (or - and _), with = padding at most`;
    }
    default:
      return 'this key format is not known';
  }
}

/** A key used as its text: any text, but outer spaces or line breaks would be signed with and are surely pasted by mistake. */
function checkTextKey(secret: string): string | undefined {
  if (/^\s|\s$/.test(secret)) return 'the secret starts or ends with spaces; paste it exactly as the sender shows it';
  if (CONTROL_CHARACTERS.test(secret)) return 'the secret contains a line break or another control character';
  return undefined;
}
