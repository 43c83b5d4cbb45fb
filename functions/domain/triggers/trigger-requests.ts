// zod/mini: the same validation, tree-shakeable, which keeps the Lambda bundle small.
import * as z from 'zod/mini';
import { AppError } from '../../shared/errors.js';
import { FLOW_NAME } from '../flows/flow-name.js';
import { CHOOSABLE_SENDER_IDS, customRow, hmacParamsFromCustomConfig, senderRow } from '../webhooks/senders/catalog.js';
import type { HmacParams } from '../webhooks/senders/catalog-types.js';
import { checkSenderSecret } from '../webhooks/senders/secrets.js';
import type { CustomSignatureConfig } from '../webhooks/signatures/custom.js';
import { hmacParamsSchema, validateHmacParams } from '../webhooks/senders/primitives/hmac-params.js';
import { didYouMean, issueMessage, listed, parseOrRefuse } from '../../shared/validation-messages.js';
import { isSourceIpEntry, MAX_SOURCE_IP_ENTRIES, SOURCE_IP_ENTRY } from '../webhooks/source-ips.js';
import { DEFAULT_HANDSHAKE_WINDOW_SECONDS, MAX_HANDSHAKE_WINDOW_SECONDS, MIN_HANDSHAKE_WINDOW_SECONDS } from './handshake-window.js';
import type { StoredSignature } from './trigger.js';

/*
 * What a request to create or change a trigger may say: the zod schemas and the parsers over them.
 * Of the triggers function's routes only those with a body need this module and zod (about 30 KB),
 * so the function loads it with the first of them (`handlers/triggers.ts`), not at init.
 */

/** RFC 7230 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
const MAX_FILTER_ENTRIES = 100;
/** An acknowledgement's body: enough for `[accepted]`, a short text or a JSON object. */
export const MAX_ACKNOWLEDGE_BODY_CHARACTERS = 1000;
/** A media type with optional parameters (`text/plain; charset=utf-8`): tokens, no line breaks. */
const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+-]{1,127}\/[A-Za-z0-9!#$&^_.+-]{1,127}(?:\s*;\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+=(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+|"[^"\r\n]*"))*$/;
const MAX_SECRET_LENGTH = 1024;
/**
 * What a fixed answer may be: JSON, plain text or XML (Twilio's TwiML), never HTML, SVG or XHTML,
 * which a browser would render as a page on the gateway's origin, where the console keeps its token.
 */
const ACKNOWLEDGE_MEDIA_TYPE = /^(?:application\/(?:json|[a-z0-9.+-]+\+json|xml)|text\/(?:plain|xml))$/;
const ACKNOWLEDGE_CONTENT_TYPES = 'content_type must be JSON (application/json, application/…+json), text/plain or XML (application/xml, text/xml)';
const isAcknowledgeContentType = (contentType: string) => ACKNOWLEDGE_MEDIA_TYPE.test(contentType.split(';')[0]!.trim().toLowerCase());
/** Answers without a body (RFC 9110: 204 No Content, 205 Reset Content). */
const isEmptyStatus = (status: number) => status === 204 || status === 205;
/** A trigger's `name` and `description`, in UTF-16 code units as JSON Schema's maxLength counts. */
export const MAX_TRIGGER_NAME_CHARACTERS = 100;
export const MAX_TRIGGER_DESCRIPTION_CHARACTERS = 1000;
/** A name: one line of text, not blank (at least one character that is neither space nor control). */
const TRIGGER_NAME = /^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$/;
/** A description: text whose only control characters are tab and line breaks. */
const TRIGGER_DESCRIPTION = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]*$/;
const TRIGGER_NAME_RULE = `name: 1-${MAX_TRIGGER_NAME_CHARACTERS} characters of one line, not blank; null for the default (the flow's name)`;
const TRIGGER_DESCRIPTION_RULE = `description: at most ${MAX_TRIGGER_DESCRIPTION_CHARACTERS} characters without control characters but tab and line breaks, or null`;

/** The longest overlap of an old signing secret or API key with its replacement: 7 days. */
export const MAX_OVERLAP_SECONDS = 7 * 24 * 3600;
/** The default overlap of a rotated signing secret: 24 hours, as Stripe and Svix keep an old secret. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 24 * 3600;

/** Standard Webhooks secrets are base64 (after an optional `whsec_`) of at least 24 bytes. */
function isStandardWebhooksSecret(secret: string): boolean {
  const body = secret.startsWith('whsec_') ? secret.slice(6) : secret;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(body) && Buffer.from(body, 'base64').length >= 24;
}

/**
 * The schemas that validate trigger requests, built by the first parse. The OpenAPI document is
 * generated from these very schemas (`functions/openapi/triggers.ts`), so what it documents cannot
 * drift from what is accepted.
 */
function buildTriggerSchemas() {
  const headerName = () => z.pipe(z.string().check(z.regex(HEADER_NAME)), z.transform((h: string) => h.toLowerCase()));

  const customSchema = z.strictObject({
    algorithm: z.enum(['sha1', 'sha256', 'sha512']),
    header: headerName(),
    encoding: z.enum(['hex', 'base64']),
    prefix: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
    timestamp_header: z.optional(headerName()),
  });

  const secretText = z.string().check(z.minLength(1), z.maxLength(MAX_SECRET_LENGTH));
  const signatureSchema = z
    .strictObject({
      // Only the senders a trigger can verify: a row the catalog lists as unsupported is refused with its reason.
      service: z.enum(CHOOSABLE_SENDER_IDS as [string, ...string[]]),
      // Optional only for a sender that hands its secret over in its handshake (checked below).
      secret: z.optional(secretText),
      // The first kind (a header, a prefix, a timestamp header), or the assembled-content HMAC
      // that can describe any HMAC sender, the catalog's own rows included.
      custom: z.optional(z.union([customSchema, hmacParamsSchema()])),
      // Meta's subscription handshake checks a token the user chose and typed into Meta's dashboard.
      verify_token: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
      // Asana and Notion: how long after the trigger is set up (or re-armed) their handshake may hand the secret over.
      handshake_window_seconds: z.optional(z.int().check(z.gte(MIN_HANDSHAKE_WINDOW_SECONDS), z.lte(MAX_HANDSHAKE_WINDOW_SECONDS))),
    })
    .check(
      z.refine((s) => s.secret !== undefined || senderRow(s.service)?.secret_from_handshake === true, { message: 'secret is required (only asana and notion hand theirs over in their handshake)' }),
      z.refine((s) => s.verify_token === undefined || senderRow(s.service)?.needs_verify_token === true, { message: 'verify_token goes with service "meta" only' }),
      z.refine((s) => s.handshake_window_seconds === undefined || senderRow(s.service)?.secret_from_handshake === true, { message: 'handshake_window_seconds goes with asana and notion only' }),
      z.refine((s) => (s.service === 'custom') === (s.custom !== undefined), { message: 'custom settings go with service "custom" only, and it needs them' }),
      z.refine((s) => s.service !== 'standard_webhooks' || (s.secret !== undefined && isStandardWebhooksSecret(s.secret)), { message: 'a standard_webhooks secret is whsec_<base64>' }),
    );

  /**
   * The fixed answer of the receiver's own 2xx (accepted, ignored, duplicate): what some senders
   * require (Adyen `[accepted]`, Discord 204, Slack an empty 200). 204 and 205 carry no body and
   * need no content type; an absent body is an empty one.
   */
  const acknowledgeResponseSchema = z
    .strictObject({
      status_code: z.int().check(z.gte(200), z.lte(299)),
      content_type: z.optional(z.string().check(
        z.maxLength(256),
        z.regex(MEDIA_TYPE, 'content_type must be a media type such as text/plain; charset=utf-8'),
        z.refine(isAcknowledgeContentType, { message: ACKNOWLEDGE_CONTENT_TYPES }),
      )),
      body: z._default(z.string().check(z.maxLength(MAX_ACKNOWLEDGE_BODY_CHARACTERS)), ''),
    })
    .check(
      z.refine((a) => !isEmptyStatus(a.status_code) || a.body === '', { message: 'acknowledge_response: a 204 or 205 answer has no body' }),
      z.refine((a) => isEmptyStatus(a.status_code) || a.content_type !== undefined, { message: 'acknowledge_response: content_type is required but for 204 and 205' }),
    );

  const eventFilterSchema = z
    .array(z.string().check(z.minLength(1), z.maxLength(256), z.regex(/^[^*]*\*?$/, 'only a trailing * is allowed')))
    .check(z.maxLength(MAX_FILTER_ENTRIES));

  /** The pattern is the shape only; `isSourceIpEntry` (net.isIP and the prefix's bounds) decides. */
  const sourceIpSchema = z.string().check(
    z.regex(SOURCE_IP_ENTRY, 'not an IP address or CIDR range'),
    z.refine(isSourceIpEntry, { message: 'not an IPv4/IPv6 address or CIDR range (prefix up to 32 or 128)' }),
  );
  /** At least one entry: an empty list reads as "nothing allowed", so "any address" is null, said outright. */
  const allowedSourceIpsSchema = z.array(sourceIpSchema).check(z.minLength(1), z.maxLength(MAX_SOURCE_IP_ENTRIES));

  const settings = {
    name: z.nullable(z.string({ error: TRIGGER_NAME_RULE }).check(z.maxLength(MAX_TRIGGER_NAME_CHARACTERS, TRIGGER_NAME_RULE), z.regex(TRIGGER_NAME, TRIGGER_NAME_RULE))),
    description: z.nullable(z.string({ error: TRIGGER_DESCRIPTION_RULE }).check(z.maxLength(MAX_TRIGGER_DESCRIPTION_CHARACTERS, TRIGGER_DESCRIPTION_RULE), z.regex(TRIGGER_DESCRIPTION, TRIGGER_DESCRIPTION_RULE))),
    flow: z.string().check(z.regex(FLOW_NAME)),
    response_mode: z.enum(['acknowledge', 'wait']),
    event_filter: eventFilterSchema,
    api_key_enabled: z.boolean(),
    signature: z.nullable(signatureSchema),
    allowed_source_ips: z.nullable(allowedSourceIpsSchema),
    enabled: z.boolean(),
    deduplicate: z.boolean(),
    split_batches: z.boolean(),
    acknowledge_response: z.nullable(acknowledgeResponseSchema),
    answer_from_listener: z.boolean(),
  };

  const createSchema = z.strictObject({
    // Absent and null alike: no name of its own, shown as its flow's (`toPublicTrigger`).
    name: z.optional(settings.name),
    description: z.optional(settings.description),
    flow: settings.flow,
    response_mode: z._default(settings.response_mode, 'acknowledge'),
    event_filter: z._default(settings.event_filter, []),
    api_key_enabled: z._default(settings.api_key_enabled, false),
    signature: z._default(settings.signature, null),
    allowed_source_ips: z._default(settings.allowed_source_ips, null),
    enabled: z._default(settings.enabled, true),
    deduplicate: z._default(settings.deduplicate, false),
    // Absent: true (records older than the setting have none either).
    split_batches: z.optional(settings.split_batches),
    // Absent and null alike: the default answer, `{"status": "accepted", …}` as JSON.
    acknowledge_response: z._default(settings.acknowledge_response, null),
    // Absent: false (records older than the setting have none either).
    answer_from_listener: z.optional(settings.answer_from_listener),
  });
  const patchSchema = z.partial(z.strictObject(settings));

  const overlapSeconds = (fallback: number) => z._default(z.int().check(z.gte(0), z.lte(MAX_OVERLAP_SECONDS)), fallback);

  /** `POST /triggers/{id}/rotate-signing-secret`. */
  const rotateSigningSecretSchema = z.strictObject({
    secret: secretText,
    previous_secret_expires_in_seconds: overlapSeconds(DEFAULT_SECRET_OVERLAP_SECONDS),
  });
  /** `POST /triggers/{id}/regenerate-api-key`: the body is optional, and by default the old key stops at once. */
  const regenerateApiKeySchema = z.strictObject({
    previous_key_expires_in_seconds: overlapSeconds(0),
  });

  return {
    settings,
    signature: signatureSchema,
    custom: customSchema,
    acknowledgeResponse: acknowledgeResponseSchema,
    sourceIp: sourceIpSchema,
    create: createSchema,
    patch: patchSchema,
    rotateSigningSecret: rotateSigningSecretSchema,
    regenerateApiKey: regenerateApiKeySchema,
  };
}
let schemas: ReturnType<typeof buildTriggerSchemas> | undefined;
export const triggerSchemas = () => (schemas ??= buildTriggerSchemas());
type Schemas = ReturnType<typeof buildTriggerSchemas>;

export type TriggerSettings = z.output<Schemas['create']>;
export type TriggerPatch = z.output<Schemas['patch']>;
export type SigningSecretRotation = z.output<Schemas['rotateSigningSecret']>;
export type ApiKeyRegeneration = z.output<Schemas['regenerateApiKey']>;

/**
 * The words of a request's first problem, field and all (`shared/validation-messages.ts` says each
 * kind of issue). A `custom` signature is one of two shapes (a union, whose own issue says only that
 * neither fits): its problem is named by the shape it was meant as, the assembled-content HMAC when
 * it has `content` (`signature.custom.key.encoding: …`).
 */
function invalid(error: z.core.$ZodError, input: unknown, root: z.core.$ZodType): AppError {
  const problem = problemOf(error, input, root);
  return new AppError('validation_error', problem, undefined, problem);
}

function problemOf(error: z.core.$ZodError, input: unknown, root: z.core.$ZodType): string {
  const issue = error.issues[0];
  if (!issue) return 'the request is not valid';
  const path = issue.path.map(String);
  const signature = (input as { signature?: { custom?: unknown; service?: unknown } } | undefined)?.signature;
  if (path[0] === 'signature' && path[1] === 'custom' && signature && typeof signature.custom === 'object' && signature.custom !== null) {
    if ('content' in signature.custom) {
      const checked = validateHmacParams(signature.custom);
      if (!checked.ok) return `signature.custom.${checked.message}`;
    } else {
      const old = triggerSchemas().custom.safeParse(signature.custom, { reportInput: true });
      if (!old.success) return issueMessage(old.error.issues[0]!, triggerSchemas().custom, ['signature', 'custom']);
    }
  }
  // A sender the catalog knows but no trigger can verify: its row says why.
  if (path[0] === 'signature' && path[1] === 'service' && typeof signature?.service === 'string') {
    const row = senderRow(signature.service);
    if (row?.verification.primitive === 'unsupported') return `signature.service: ${row.name} cannot be verified here: ${row.verification.reason}`;
  }
  return issueMessage(issue, root);
}

/**
 * A secret that could never verify its sender's requests (a Discord key that is not 64 hex
 * characters, an SNS secret that is not a topic ARN, a `whsec_` that does not decode) is refused
 * when the trigger is saved, saying the form expected, rather than answered 401 at every delivery.
 */
function checkSignatureSecret(signature: { service: string; secret?: string; custom?: CustomSignatureConfig | HmacParams } | null | undefined): void {
  if (signature?.secret === undefined) return;
  const custom = signature.custom;
  const row = signature.service === 'custom' && custom
    ? customRow('content' in custom ? custom : hmacParamsFromCustomConfig(custom))
    : senderRow(signature.service);
  const problem = row && checkSenderSecret(row, signature.secret);
  if (problem) throw new AppError('validation_error', problem, undefined, `signature.secret: ${problem}`);
}

type ParsedSignature = z.output<Schemas['signature']>;

/**
 * The rules of a whole signature, after its fields parsed: a sender whose handshake carries a token
 * the user chose (Meta) needs it given (its secret is never the token), and a sender that hands its
 * secret over in its handshake gets the default window. Not in the schema, so that a rotation's
 * `checkSecretFor` (a secret alone) passes them.
 */
function withSignatureRules(signature: ParsedSignature | null | undefined): ParsedSignature | null | undefined {
  if (!signature) return signature;
  const row = senderRow(signature.service);
  if (row?.needs_verify_token && signature.verify_token === undefined) {
    const problem = `signature.verify_token: required for ${signature.service}: the verify token you type into the sender's dashboard (the secret is never used as one)`;
    throw new AppError('validation_error', problem, undefined, problem);
  }
  if (row?.secret_from_handshake && signature.handshake_window_seconds === undefined) return { ...signature, handshake_window_seconds: DEFAULT_HANDSHAKE_WINDOW_SECONDS };
  return signature;
}

/**
 * `POST /triggers/{id}/await-handshake` is for a sender that hands its secret over in its handshake
 * (Asana, Notion): 400 for any other, whose secret its owner pastes.
 */
export function checkAwaitsHandshake(signature: Pick<StoredSignature, 'service'> | null): void {
  if (!signature || senderRow(signature.service)?.secret_from_handshake !== true) {
    const problem = 'signature.service: only asana and notion hand their secret over in a handshake; set any other secret with PATCH or rotate-signing-secret';
    throw new AppError('validation_error', problem, undefined, problem);
  }
}

/** A flow that does not exist is named, with the flows that do (and the nearest, when it was misspelt). */
function checkFlow(flow: string | undefined, knownFlows: ReadonlySet<string>): void {
  if (flow === undefined || knownFlows.has(flow)) return;
  const flows = [...knownFlows].sort();
  const problem = `flow: no flow is named ${JSON.stringify(flow)}${didYouMean(flow, flows)}; the flows are ${listed(flows)} (GET /flows)`;
  throw new AppError('validation_error', 'unknown flow', undefined, problem);
}

/** Validates a create request; unknown fields, unknown flows and bad signature settings are `validation_error`. */
export function parseTriggerSettings(body: unknown, knownFlows: ReadonlySet<string>): TriggerSettings {
  const parsed = triggerSchemas().create.safeParse(body, { reportInput: true });
  if (!parsed.success) throw invalid(parsed.error, body, triggerSchemas().create);
  checkFlow(parsed.data.flow, knownFlows);
  checkSignatureSecret(parsed.data.signature);
  return { ...parsed.data, signature: withSignatureRules(parsed.data.signature) ?? null };
}

/** Validates a PATCH request: the same fields, all optional, at least one. */
export function parseTriggerPatch(body: unknown, knownFlows: ReadonlySet<string>): TriggerPatch {
  const parsed = triggerSchemas().patch.safeParse(body, { reportInput: true });
  if (!parsed.success) throw invalid(parsed.error, body, triggerSchemas().patch);
  if (Object.keys(parsed.data).length === 0) {
    throw new AppError('validation_error', 'nothing to change', undefined, `nothing to change: send at least one of ${Object.keys(triggerSchemas().settings).join(', ')}`);
  }
  checkFlow(parsed.data.flow, knownFlows);
  checkSignatureSecret(parsed.data.signature);
  return parsed.data.signature === undefined ? parsed.data : { ...parsed.data, signature: withSignatureRules(parsed.data.signature) ?? null };
}

/** Validates a rotation request; whether the secret suits the trigger's scheme is checked against the trigger (`checkSecretFor`). */
export function parseSigningSecretRotation(body: unknown): SigningSecretRotation {
  return parseOrRefuse(triggerSchemas().rotateSigningSecret, body);
}

/** Validates a regenerate-api-key request (`{}` for an empty body). */
export function parseApiKeyRegeneration(body: unknown): ApiKeyRegeneration {
  return parseOrRefuse(triggerSchemas().regenerateApiKey, body);
}

/** A new secret for an existing signature must pass the same rules as one given with it (standard_webhooks: `whsec_`). */
export function checkSecretFor(signature: Pick<StoredSignature, 'service' | 'custom'>, secret: string): void {
  checkSignatureSecret(parseOrRefuse(triggerSchemas().signature, { service: signature.service, secret, ...(signature.custom && { custom: signature.custom }) }));
}
