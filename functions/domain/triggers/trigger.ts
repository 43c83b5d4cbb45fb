// zod/mini: the same validation, tree-shakeable, which keeps the Lambda bundle small.
import * as z from 'zod/mini';
import { AppError } from '../../shared/errors.js';
import { FLOW_NAME } from '../flows/flow-name.js';
import { webhookUrl } from './webhook-url.js';
import { SIGNATURE_SERVICES, type CustomSignatureConfig, type SignatureService } from '../webhooks/signatures/index.js';

/** RFC 7230 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
const MAX_FILTER_ENTRIES = 100;
const MAX_SECRET_LENGTH = 1024;

export type ResponseMode = 'acknowledge' | 'wait';

/** A trigger as stored: secrets only sealed, the API key only as a hash. */
export interface TriggerRecord {
  id: string;
  account_id: string;
  webhook_id: string;
  flow: string;
  response_mode: ResponseMode;
  event_filter: string[];
  api_key_enabled: boolean;
  api_key_hash?: string;
  signature: { service: SignatureService; secret_sealed: string; custom?: CustomSignatureConfig } | null;
  enabled: boolean;
  deduplicate: boolean;
  created_at: string;
  updated_at: string;
  /** Bumped on every change so the receiver's copy never goes back to an older one. */
  version: number;
}

/** A trigger as its owner sees it: no secret, no key, no hash. */
export interface PublicTrigger {
  id: string;
  webhook_id: string;
  url: string;
  flow: string;
  response_mode: ResponseMode;
  event_filter: string[];
  api_key_enabled: boolean;
  signature: { service: SignatureService; custom?: CustomSignatureConfig } | null;
  enabled: boolean;
  deduplicate: boolean;
  created_at: string;
  updated_at: string;
}


export const toPublicTrigger = (record: TriggerRecord, webhookBaseUrl: string): PublicTrigger => ({
  id: record.id,
  webhook_id: record.webhook_id,
  url: webhookUrl(webhookBaseUrl, record.webhook_id),
  flow: record.flow,
  response_mode: record.response_mode,
  event_filter: record.event_filter,
  api_key_enabled: record.api_key_enabled,
  signature: record.signature && { service: record.signature.service, ...(record.signature.custom && { custom: record.signature.custom }) },
  enabled: record.enabled,
  deduplicate: record.deduplicate,
  created_at: record.created_at,
  updated_at: record.updated_at,
});

const headerName = () => z.pipe(z.string().check(z.regex(HEADER_NAME)), z.transform((h: string) => h.toLowerCase()));

const customSchema = z.strictObject({
  algorithm: z.enum(['sha1', 'sha256', 'sha512']),
  header: headerName(),
  encoding: z.enum(['hex', 'base64']),
  prefix: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
  timestamp_header: z.optional(headerName()),
});

const signatureSchema = z
  .strictObject({
    service: z.enum(SIGNATURE_SERVICES as [SignatureService, ...SignatureService[]]),
    secret: z.string().check(z.minLength(1), z.maxLength(MAX_SECRET_LENGTH)),
    custom: z.optional(customSchema),
  })
  .check(
    z.refine((s) => (s.service === 'custom') === (s.custom !== undefined), { message: 'custom settings go with service "custom" only, and it needs them' }),
    z.refine((s) => s.service !== 'standard_webhooks' || isStandardWebhooksSecret(s.secret), { message: 'a standard_webhooks secret is whsec_<base64>' }),
  );

/** Standard Webhooks secrets are base64 (after an optional `whsec_`) of at least 24 bytes. */
function isStandardWebhooksSecret(secret: string): boolean {
  const body = secret.startsWith('whsec_') ? secret.slice(6) : secret;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(body) && Buffer.from(body, 'base64').length >= 24;
}

const eventFilterSchema = z
  .array(z.string().check(z.minLength(1), z.maxLength(256), z.regex(/^[^*]*\*?$/, 'only a trailing * is allowed')))
  .check(z.maxLength(MAX_FILTER_ENTRIES));

const settings = {
  flow: z.string().check(z.regex(FLOW_NAME)),
  response_mode: z.enum(['acknowledge', 'wait']),
  event_filter: eventFilterSchema,
  api_key_enabled: z.boolean(),
  signature: z.nullable(signatureSchema),
  enabled: z.boolean(),
  deduplicate: z.boolean(),
};

const createSchema = z.strictObject({
  flow: settings.flow,
  response_mode: z._default(settings.response_mode, 'acknowledge'),
  event_filter: z._default(settings.event_filter, []),
  api_key_enabled: z._default(settings.api_key_enabled, false),
  signature: z._default(settings.signature, null),
  enabled: z._default(settings.enabled, true),
  deduplicate: z._default(settings.deduplicate, false),
});
const patchSchema = z.partial(z.strictObject(settings));

/**
 * The schemas that validate trigger requests. The OpenAPI document is generated from these very
 * schemas (`functions/openapi/triggers.ts`), so what it documents cannot drift from what is accepted.
 */
export const triggerSchemas = { settings, signature: signatureSchema, custom: customSchema, create: createSchema, patch: patchSchema };

export type TriggerSettings = z.output<typeof createSchema>;
export type TriggerPatch = z.output<typeof patchSchema>;

function checkFlow(flow: string | undefined, knownFlows: ReadonlySet<string>): void {
  if (flow !== undefined && !knownFlows.has(flow)) throw new AppError('validation_error', 'unknown flow');
}

/** Validates a create request; unknown fields, unknown flows and bad signature settings are `validation_error`. */
export function parseTriggerSettings(body: unknown, knownFlows: ReadonlySet<string>): TriggerSettings {
  const parsed = createSchema.safeParse(body);
  if (!parsed.success) throw new AppError('validation_error', parsed.error.issues[0]?.message);
  checkFlow(parsed.data.flow, knownFlows);
  return parsed.data;
}

/** Validates a PATCH request: the same fields, all optional, at least one. */
export function parseTriggerPatch(body: unknown, knownFlows: ReadonlySet<string>): TriggerPatch {
  const parsed = patchSchema.safeParse(body);
  if (!parsed.success) throw new AppError('validation_error', parsed.error.issues[0]?.message);
  if (Object.keys(parsed.data).length === 0) throw new AppError('validation_error', 'nothing to change');
  checkFlow(parsed.data.flow, knownFlows);
  return parsed.data;
}
