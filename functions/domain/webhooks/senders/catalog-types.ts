/*
 * The shapes of the sender catalog: a row names one verification primitive and gives its
 * parameters as plain, JSON-serialisable data, so a user's `custom` configuration can say the same
 * things a built-in row says. Header names are lower case throughout (the receiver lower-cases
 * what it receives).
 */
import type { HandshakeKindName } from '../handshakes.js';
import type { HmacAlgorithm, SignatureEncoding } from '../signatures/hmac.js';
import type { EcdsaP256Params } from './primitives/ecdsa.js';
import type { Ed25519Params } from './primitives/ed25519.js';
import type { JwtAlgorithm, JwtParams } from './primitives/jwt.js';
import type { BasicParams, StaticTokenParams } from './primitives/token.js';
import type { CertificateUrlRule, X509RsaParams } from './primitives/x509-rsa.js';
import type { DeliveryPolicy, ListedBatch, SignatureServiceListing } from './listing-types.js';
import type { SecretField } from '../secret-fields.js';

export type { SecretField, DeliveryPolicy };

export type { HmacAlgorithm, SignatureEncoding };
// The categories live with the listing's shapes, which the console imports (they import nothing).
export { SENDER_CATEGORIES, type SenderCategory } from './listing-types.js';

/**
 * One sender: what the API and the console list of it (`SignatureServiceListing`: id, name,
 * category, docs, what to paste, whether it expects a handshake or a reply of its own) and how its
 * requests are verified and answered.
 */
export interface SenderRow extends Omit<SignatureServiceListing, 'needs_verify_token' | 'event_type' | 'delivery_id' | 'batch' | 'event_names'> {
  /** The handshake the receiver answers for this sender itself (`handshakes.ts`), when it does. */
  handshake_answer?: HandshakeKindName;
  /**
   * The sender hands the secret over in its handshake (Asana's `X-Hook-Secret`, Notion's
   * `verification_token`): a trigger may be created without one, and refuses every other delivery
   * until the handshake has given it one.
   */
  secret_from_handshake?: true;
  /**
   * The sender's handshake carries a token the user chose in the sender's dashboard (Meta's
   * `hub.verify_token`): a trigger needs its own `signature.verify_token`, never its secret instead.
   */
  needs_verify_token?: true;
  /**
   * Where the sender's requests carry a secret in clear (a static token, a handshake's secret, a
   * verify token): redacted in stored requests and withheld from flow inputs (`secret-fields.ts`).
   */
  secret_fields?: SecretField[];
  /**
   * What every secret the sender issues starts with (Stripe's `whsec_`): a secret without it was
   * copied from somewhere else (an API key, another sender's secret) and is refused when the trigger
   * is saved, in the words of `secret_label`.
   */
  secret_prefix?: string;
  /** The body is read as JSON whatever its Content-Type says (Amazon SNS sends `text/plain`). */
  body_as?: 'json';
  /**
   * What a verified request must carry to be a delivery (`body-rule.ts`): the body X signs with
   * the key its CRC answer uses must be a JSON object, so no answered token is ever a delivery.
   */
  accepts?: BodyRule;
  /**
   * Where the sender puts its own id of a delivery, which flows and filters read as `event_id`.
   * `signed`: the row's signature covers it (a header it signs, a member of a body it signs), so
   * deduplication keys on it. An unsigned id is shown, never trusted: anyone can write it.
   */
  delivery_id?: SignedValue;
  /**
   * Where the sender puts a delivery's event type, which filters match and flows read as `type`
   * (`trigger-input.ts`): the first of `sources` present, as the sender's documentation writes it.
   */
  event_type: EventTypeRule;
  /**
   * One POST carries several events (SendGrid's array, Okta's `data.events[]`): where the list is,
   * and where each element's type and id are. The receiver verifies and stores the POST once, then
   * routes and dispatches each element as an event of its own (`receiver/batch.ts`), unless the
   * trigger sets `split_batches: false`.
   */
  batch?: BatchRule;
  /**
   * The signed id deduplication keys on where the delivery id is not one (Mailgun signs only
   * `signature.token`, PayPal its `paypal-transmission-id`). With neither, deduplication keys on
   * the SHA-256 of the signed content without its timestamp (`replay-key.ts`).
   */
  replay_key?: RequestValue;
  /**
   * `replay_key`: a second delivery with the same replay key within the row's timestamp tolerance
   * is refused (recorded `duplicate`, no flow run), whatever the trigger's `deduplicate` says: for
   * senders whose signature binds the payload weakly or not at all. Absent, a row with a timestamp
   * rule refuses the same way a second delivery of the same signed content, timestamp included
   * (an exact replay: no sender sends the same signed bytes twice within its own tolerance).
   */
  single_use?: 'replay_key';
  /**
   * The JSON body's fields the sender signs, by the value of its field `by` (SNS: by `Type`): a
   * flow is handed those alone (`signed-fields.ts`), never what was added beside the signature.
   */
  signed_fields?: { by: string; fields: Readonly<Record<string, readonly string[]>> };
  verification: Verification;
}

/** Where a batching sender's events are in its JSON body (`listing-types.ts`, which the console reads too). */
export type BatchRule = ListedBatch;

/** A verified body's shape, checked before anything reads it as a delivery: 415 or 400 otherwise. */
export interface BodyRule {
  /** The only media type taken (parameters such as `charset` aside): 415 for any other. */
  content_type?: 'application/json';
  /** The JSON body must be an object: 400 for an array, a string, a number. */
  json?: 'object';
  /**
   * Members the JSON body must hold when an unsigned header claims a kind of message (Twitch: a
   * `notification` carries `event`, so a captured verification replayed as one is refused): 400.
   */
  requires?: { path: JsonPath; when_header: string; equals: string }[];
}

/**
 * Where a delivery's event type is. `sources` are tried in order and the first string of 1–256
 * characters is the type (GitLab: its `X-Gitlab-Event` header, else the body's `object_kind`);
 * `example` is one type as the sender writes it. A sender whose deliveries carry no type has no
 * sources, and its `note` says what a filter can match instead (usually nothing: a trigger with a
 * filter then ignores every delivery). A missing or malformed field never fails a delivery: the
 * type is then absent.
 */
export type EventTypeRule =
  | { sources: [EventTypeSource, ...EventTypeSource[]]; example: string; note?: string }
  | { sources: []; note: string };

/** Where an event type is: a value the request carries, or a name the body holds. */
export type EventTypeSource = RequestValue | PresentKey;

/**
 * A type that is a name, not a value (Telegram's Update holds one optional field, `message`,
 * `callback_query`, …, and which one it is says what happened): the first of `among` the JSON
 * body holds as a top-level member, neither null nor absent. Only these names count, so the type
 * is always one the sender documents.
 */
export interface PresentKey {
  from: 'json_key';
  among: [string, ...string[]];
}

/** A value a request carries: a header, or a member of the JSON body (or a form field, for a one-name path). */
export type RequestValue = { from: 'header'; name: string } | { from: 'json'; path: JsonPath };

/** A request value, and whether the row's signature covers it. */
export type SignedValue = RequestValue & { signed: boolean };

/** How a row's requests are verified: one primitive and its parameters. */
export type Verification =
  | ({ primitive: 'hmac' } & HmacParams)
  | ({ primitive: 'ed25519' } & Ed25519Params)
  | ({ primitive: 'ecdsa_p256' } & EcdsaP256Params)
  | ({ primitive: 'x509_rsa' } & X509RsaParams)
  | ({ primitive: 'jwt' } & JwtParams)
  | ({ primitive: 'static_token' } & StaticTokenParams)
  | ({ primitive: 'basic' } & BasicParams)
  /**
   * A sender that authenticates in more than one way (BigCommerce: a Standard Webhooks signature
   * by the app's client secret, or a static header set on the hook): a request verifies when one
   * of `schemes` verifies it with one of the trigger's secrets, and a secret is usable when one
   * scheme takes its form. Each scheme finds what it reads or fails, so a secret of one scheme's
   * form never passes the other's check.
   */
  | { primitive: 'any_of'; schemes: [Verification, Verification, ...Verification[]] }
  // The `custom` row: the trigger's own settings (HMAC parameters) say how; see `customRow`.
  | { primitive: 'configured' }
  | { primitive: 'unsupported'; reason: string };

export type Primitive = Verification['primitive'];

/* ------------------------------------------------------------------------------------------ */
/* HMAC over assembled content                                                                  */
/* ------------------------------------------------------------------------------------------ */

/** HMAC over content assembled from the request, the signature read from where the sender puts it. */
export interface HmacParams {
  algorithm: HmacAlgorithm;
  key: HmacKey;
  /** The signed bytes, in order; or the one named builder for content that parts cannot describe. */
  content: ContentPart[] | ContentBuilder;
  signature: SignatureSource;
  /** How each signature is written: hex or base64 (base64url letters are accepted too). */
  encoding: SignatureEncoding;
  /** When set, the request carries a signed timestamp that must be this fresh. */
  timestamp?: TimestampRule;
  /**
   * When set, the JSON body holds an array of independently signed items (Adyen's notification
   * items): each element is verified on its own, `json` content parts and a `json` signature are
   * read relative to the element, and every element must verify.
   */
  items?: { path: JsonPath };
}

/** How the pasted secret becomes the HMAC key. */
export interface HmacKey {
  /**
   * `text`: its UTF-8 bytes, as is (Stripe's `whsec_…` is used whole); `hex` / `base64`: decoded
   * (Adyen, Airtable, Svix); `sha1_of_text`: the SHA-1 digest of its text (Braintree).
   */
  format: 'text' | 'hex' | 'base64' | 'sha1_of_text';
  /** Removed from the start of the secret, when present, before decoding (Svix's `whsec_`). */
  strip_prefix?: string;
}

/** A path into the JSON body: property names, and array indexes written as decimal strings. */
export type JsonPath = string[];

/** One piece of the signed content. */
export type ContentPart =
  /** The body exactly as received. */
  | { part: 'body' }
  /** The URL as the sender called it, query included. */
  | { part: 'url' }
  /** The request method, upper case. */
  | { part: 'method' }
  /** The timestamp the `timestamp` rule read, as sent. */
  | { part: 'timestamp' }
  /** Fixed text, such as a separator or a version (`v0:`). */
  | { part: 'literal'; text: string }
  /** A header's value. */
  | { part: 'header'; name: string }
  /**
   * A field of the JSON body: a string as is, an integer or a boolean as written. With
   * `optional`, an absent or null field is empty text (Adyen's `originalReference`).
   */
  | { part: 'json'; path: JsonPath; optional?: boolean }
  /** A field of an `application/x-www-form-urlencoded` body, decoded. */
  | { part: 'form'; name: string };

/**
 * Named content for the one sender whose signed content is not a sequence of parts: Twilio signs
 * the URL as it called it, in any of several normalisations twilio-node accepts, followed by the
 * form parameters sorted by name, or for other bodies the URL alone with the body bound by a
 * `bodySHA256` query parameter.
 */
export interface ContentBuilder {
  builder: 'twilio';
}

/** Where the signature is and how its text is read. */
export type SignatureSource =
  | ({ from: 'header'; name: string } & SignatureText)
  | ({ from: 'json'; path: JsonPath } & SignatureText)
  | ({ from: 'form'; name: string } & SignatureText)
  /** One signature per header named `<name_prefix><n>`, n = 1, 2, … (DocuSign, one per active key). */
  | { from: 'numbered_headers'; name_prefix: string };

export interface SignatureText {
  /** Text before the signature, e.g. `sha256=`; required when set. */
  prefix?: string;
  /** The text is a list of `key<assign>value` items, several of which may be signatures. */
  list?: SignatureList;
}

/**
 * A list such as Stripe's `t=…,v1=…,v1=…`, Paddle's `ts=…;h1=…`, Svix's `v1,… v1,…` or
 * Braintree's `publicKey|sig&publicKey|sig`. Items are trimmed; items without `assign` are ignored.
 */
export interface SignatureList {
  separator: ',' | ';' | ' ' | '&';
  assign: '=' | ',' | '|';
  /** Items with this key are signatures (`v1`); without it, every item's value is a candidate. */
  key?: string;
}

/** A signed timestamp: where it is, how it is written, and how far from now it may be. */
export interface TimestampRule {
  source: TimestampSource;
  format: TimestampFormat;
  /** Accepted either way from the receiver's clock. */
  tolerance_seconds: number;
}

export type TimestampSource =
  | { from: 'header'; name: string }
  | { from: 'json'; path: JsonPath }
  | { from: 'form'; name: string }
  /** An item of the signature list, such as Stripe's `t`; given twice, it is ambiguous and refused. */
  | { from: 'signature_list'; key: string };

/** Unix seconds or milliseconds (decimal digits, or a JSON integer), or an RFC 3339 date-time. */
export type TimestampFormat = 'unix_seconds' | 'unix_milliseconds' | 'rfc3339';

/* ------------------------------------------------------------------------------------------ */
/* The other primitives: each row's parameters are the primitive's own type, so a row can say     */
/* nothing its verifier does not read. Their fields are camelCase, as the primitives wrote them;  */
/* only the HMAC parameters are snake_case JSON, because a `custom` trigger's settings give them. */
/* ------------------------------------------------------------------------------------------ */

export type { Ed25519Params, EcdsaP256Params, X509RsaParams, CertificateUrlRule, JwtParams, JwtAlgorithm, StaticTokenParams, BasicParams };
