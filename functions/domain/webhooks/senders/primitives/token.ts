// Senders that sign nothing but send back a value the user gave them:
// GitLab `X-Gitlab-Token` https://docs.gitlab.com/user/project/integrations/webhooks/#custom-headers
// Telegram `X-Telegram-Bot-Api-Secret-Token` https://core.telegram.org/bots/api#setwebhook
// Okta event hooks (header and value chosen by the admin) https://developer.okta.com/docs/concepts/event-hooks/
// Auth0 log streams `Authorization` https://auth0.com/docs/customize/log-streams/custom-log-streams
// BigCommerce (custom headers on the hook) https://developer.bigcommerce.com/docs/integrations/webhooks
// Microsoft Graph `clientState` in each notification https://learn.microsoft.com/graph/change-notifications-delivery-webhooks
// Postmark, HTTP Basic in the webhook URL https://postmarkapp.com/developer/webhooks/webhooks-overview
import { parseJsonWithinDepth } from '../../../../shared/json.js';
import { headerValue } from '../../headers.js';
import { decodeSignature } from '../../signatures/hmac.js';
import type { VerifyContext } from '../context.js';
import { equalsAny } from './equal-text.js';

/** Where the sender puts the token. The comparison is always constant-time, against every pasted secret. */
export type StaticTokenParams =
  | {
      /** A fixed header; its whole value (after `scheme`, when set) must equal a pasted secret. */
      location: 'header';
      /** Lower-case header name, e.g. `x-gitlab-token`. */
      header: string;
      /** When set, the value is `<scheme> <token>`, the scheme matched case-insensitively. */
      scheme?: string;
    }
  | {
      /**
       * A header the user names: the pasted secret is a header line, `Name: value` (Okta lets the
       * admin choose the header; BigCommerce sends whatever headers the hook was created with).
       */
      location: 'named_header';
    }
  | {
      /**
       * A field of every item of an array in the JSON body: Microsoft Graph puts `clientState` in
       * each notification of `value[]`. Every item must carry a pasted secret, so one genuine
       * notification cannot carry forged ones in the same request.
       */
      location: 'body_items';
      array: string;
      field: string;
    };

/** Headers and fields of a few KB at most are plausible; anything longer is refused before hashing. */
const MAX_TOKEN_CHARS = 8 * 1024;
/** RFC 9110 token characters, the only ones a header name may have. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
/** `Name: value`, split at the first colon (a header name has none). */
const HEADER_LINE = /^([^:]*):(.*)$/s;
/** `username:password`, both non-empty; RFC 7617 §2: the user-id cannot contain a colon, so the first one separates them. */
const BASIC_CREDENTIALS = /^[^:]+:.+$/s;

/** True when the request carries one of `ctx.secrets` where the row says. Never throws on request content. */
export function verifyStaticToken(params: StaticTokenParams, ctx: VerifyContext): boolean {
  const secrets = ctx.secrets.filter((secret) => secret.length > 0); // an empty token is one anyone has
  if (secrets.length === 0) return false;
  const { headers, rawBody } = ctx.request;
  switch (params.location) {
    case 'header': {
      const received = withoutScheme(headerValue(headers, params.header), params.scheme);
      return received !== undefined && received.length <= MAX_TOKEN_CHARS && equalsAny(received, secrets);
    }
    case 'named_header': {
      let matched = false;
      for (const secret of secrets) {
        const line = parseHeaderLine(secret);
        const received = line && headerValue(headers, line.name);
        // Every pasted line is compared, so timing does not tell which one matched.
        if (line && received !== undefined && received.length <= MAX_TOKEN_CHARS) matched = equalsAny(received, [line.value]) || matched;
      }
      return matched;
    }
    case 'body_items': {
      const items = jsonArrayField(rawBody, params.array);
      if (!items || items.length === 0) return false;
      return items.every((item) => {
        const received = typeof item === 'object' && item !== null && Object.hasOwn(item, params.field) ? (item as Record<string, unknown>)[params.field] : undefined;
        return typeof received === 'string' && received.length <= MAX_TOKEN_CHARS && equalsAny(received, secrets);
      });
    }
    default:
      return false;
  }
}

/** HTTP Basic credentials; Postmark sends them from `https://user:password@…` in the webhook URL. */
export interface BasicParams {
  /** Lower-case header name; `authorization` when absent. */
  header?: string;
}

/**
 * True when the request's `Authorization: Basic …` credentials equal one of `ctx.secrets`
 * (`username:password`, several during a rotation). Compared in constant time as whole
 * `username:password` strings, so neither part can be guessed separately.
 */
export function verifyBasic(params: BasicParams, ctx: VerifyContext): boolean {
  const secrets = ctx.secrets.filter((secret) => secret.length > 0);
  const encoded = withoutScheme(headerValue(ctx.request.headers, params.header ?? 'authorization'), 'Basic');
  if (secrets.length === 0 || encoded === undefined || encoded.length > MAX_TOKEN_CHARS) return false;
  const decoded = decodeSignature(encoded, 'base64'); // strict: junk characters make it undefined
  return decoded !== undefined && equalsAny(decoded, secrets);
}

function withoutScheme(value: string | undefined, scheme: string | undefined): string | undefined {
  if (value === undefined || scheme === undefined) return value;
  const space = value.indexOf(' ');
  if (space < 0 || value.slice(0, space).toLowerCase() !== scheme.toLowerCase()) return undefined;
  const rest = value.slice(space + 1).trim();
  return rest === '' ? undefined : rest;
}

/** `Name: value` as pasted; the name lower-cased as the receiver stores header names. */
function parseHeaderLine(secret: string): { name: string; value: string } | undefined {
  const parts = HEADER_LINE.exec(secret);
  if (!parts) return undefined;
  const name = parts[1]!.trim();
  const value = parts[2]!.trim();
  return HEADER_NAME.test(name) && value !== '' ? { name: name.toLowerCase(), value } : undefined;
}

function jsonArrayField(rawBody: Uint8Array, field: string): unknown[] | undefined {
  // Read before the request is verified: its nesting is checked before it is parsed.
  const body = parseJsonWithinDepth(Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8'));
  if (typeof body !== 'object' || body === null || !Object.hasOwn(body, field)) return undefined;
  const items: unknown = (body as Record<string, unknown>)[field];
  return Array.isArray(items) ? items : undefined;
}

/** Why a pasted token would never match; `undefined` when usable. */
export function checkStaticTokenSecret(secret: string, params: StaticTokenParams): string | undefined {
  if (params.location === 'named_header') {
    return parseHeaderLine(secret) && !CONTROL_CHARACTERS.test(secret)
      ? undefined
      : 'paste the header the sender sends, as a header line: Name: value (e.g. Authorization: the-value-you-set)';
  }
  if (secret.length === 0) return 'the token is empty';
  if (secret.length > MAX_TOKEN_CHARS) return `the token is longer than ${MAX_TOKEN_CHARS} characters`;
  if (CONTROL_CHARACTERS.test(secret)) return 'the token contains a line break or another control character';
  // Header values arrive trimmed, so a token with outer spaces could never match.
  if (/^\s|\s$/.test(secret)) return 'the token starts or ends with spaces; paste it exactly as set in the sender';
  return undefined;
}

/** Why pasted Basic credentials would never match; `undefined` when usable. */
export function checkBasicSecret(secret: string): string | undefined {
  if (!BASIC_CREDENTIALS.test(secret)) return 'paste the credentials as username:password, as in the webhook URL https://username:password@…';
  if (CONTROL_CHARACTERS.test(secret)) return 'the credentials contain a line break or another control character';
  return undefined;
}
