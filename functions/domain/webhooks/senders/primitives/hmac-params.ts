// zod/mini, as the trigger requests are validated (trigger-requests.ts): a schema the OpenAPI
// document can be generated from, loaded only where settings are validated, never by the receiver.
import * as z from 'zod/mini';
import type { HmacParams } from '../catalog-types.js';
import { describeIssue } from '../../../../shared/validation-messages.js';

/** RFC 7230 token: what a header name may be (as trigger-requests.ts accepts them). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** The widest timestamp tolerance a configuration may ask for: one hour (Twitch, the widest sender, asks for ten minutes). */
export const MAX_TOLERANCE_SECONDS = 3600;
const MAX_PARTS = 32;
const MAX_PATH_SEGMENTS = 16;

function buildHmacParamsSchema() {
  const text = (max: number) => z.string().check(z.minLength(1), z.maxLength(max));
  const headerName = () => z.pipe(z.string().check(z.regex(HEADER_NAME, 'not a header name')), z.transform((h: string) => h.toLowerCase()));
  const jsonPath = z.array(text(128)).check(z.minLength(1), z.maxLength(MAX_PATH_SEGMENTS));
  const oneOf = (what: string, names: string) => ({ error: `${what} must be one of ${names}` });

  const key = z.strictObject({
    format: z.enum(['text', 'hex', 'base64', 'sha1_of_text']),
    strip_prefix: z.optional(text(32)),
  });

  const part = z.discriminatedUnion(
    'part',
    [
      z.strictObject({ part: z.literal('body') }),
      z.strictObject({ part: z.literal('url') }),
      z.strictObject({ part: z.literal('method') }),
      z.strictObject({ part: z.literal('timestamp') }),
      z.strictObject({ part: z.literal('literal'), text: text(256) }),
      z.strictObject({ part: z.literal('header'), name: headerName() }),
      z.strictObject({ part: z.literal('json'), path: jsonPath, optional: z.optional(z.boolean()) }),
      z.strictObject({ part: z.literal('form'), name: text(128) }),
    ],
    oneOf('part', 'body, url, method, timestamp, literal, header, json, form'),
  );
  const content = z.union([z.array(part).check(z.minLength(1), z.maxLength(MAX_PARTS)), z.strictObject({ builder: z.literal('twilio') })], {
    error: 'content is a list of parts, or {"builder": "twilio"}',
  });

  const list = z.strictObject({
    separator: z.enum([',', ';', ' ', '&']),
    assign: z.enum(['=', ',', '|']),
    key: z.optional(text(32)),
  });
  const signatureText = { prefix: z.optional(text(64)), list: z.optional(list) };
  const signature = z.discriminatedUnion(
    'from',
    [
      z.strictObject({ from: z.literal('header'), name: headerName(), ...signatureText }),
      z.strictObject({ from: z.literal('json'), path: jsonPath, ...signatureText }),
      z.strictObject({ from: z.literal('form'), name: text(128), ...signatureText }),
      z.strictObject({ from: z.literal('numbered_headers'), name_prefix: headerName() }),
    ],
    oneOf('from', 'header, json, form, numbered_headers'),
  );

  const timestampSource = z.discriminatedUnion(
    'from',
    [
      z.strictObject({ from: z.literal('header'), name: headerName() }),
      z.strictObject({ from: z.literal('json'), path: jsonPath }),
      z.strictObject({ from: z.literal('form'), name: text(128) }),
      z.strictObject({ from: z.literal('signature_list'), key: text(32) }),
    ],
    oneOf('from', 'header, json, form, signature_list'),
  );
  const timestamp = z.strictObject({
    source: timestampSource,
    format: z.enum(['unix_seconds', 'unix_milliseconds', 'rfc3339']),
    tolerance_seconds: z.int().check(z.gte(1), z.lte(MAX_TOLERANCE_SECONDS)),
  });

  return z
    .strictObject({
      algorithm: z.enum(['sha1', 'sha256', 'sha512']),
      key,
      content,
      signature,
      encoding: z.enum(['hex', 'base64']),
      timestamp: z.optional(timestamp),
      items: z.optional(z.strictObject({ path: jsonPath })),
    })
    .check(z.superRefine((params, ctx) => {
      const problem = (path: (string | number)[], message: string) => ctx.issues.push({ code: 'custom', path, message, input: params });
      const parts = Array.isArray(params.content) ? params.content : [];
      // Content of literals alone would sign nothing of the request: one signature would pass for any body.
      if (Array.isArray(params.content) && parts.every((p) => p.part === 'literal')) {
        problem(['content'], 'content must include a part of the request (body, url, method, timestamp, header, json or form)');
      }
      parts.forEach((p, i) => {
        if (p.part === 'timestamp' && !params.timestamp) problem(['content', i], 'a timestamp part needs the timestamp setting');
      });
      // Content that signs nothing of the body (the method, the URL, a header) passes for any body:
      // one captured signature would carry whatever an attacker posts.
      if (parts.length > 0 && !parts.every((p) => p.part === 'literal') && !parts.some((p) => BODY_PARTS.has(p.part))) {
        problem(['content'], 'content must sign the body: a body part, or json or form fields of it');
      }
      // A timestamp the signature does not cover can be set to now on any captured request.
      if (params.timestamp && !timestampSigned(params.content, params.timestamp.source)) {
        problem(['timestamp', 'source'], 'the timestamp must be signed: add a timestamp part to content (or read it from a signed header, field or body)');
      }
      // Where the signature is read from: configuration, public (named so it is not taken for the signature itself).
      const source = params.signature;
      const list = source.from === 'numbered_headers' ? undefined : source.list;
      if (params.timestamp?.source.from === 'signature_list' && !list) {
        problem(['timestamp', 'source'], 'a timestamp from the signature list needs signature.list');
      }
      if (list && list.separator === list.assign) problem(['signature', 'list', 'assign'], 'assign must differ from separator');
      if (params.items) {
        if (source.from !== 'json') problem(['signature', 'from'], 'with items, the signature is read from each item (from: json)');
        if (!Array.isArray(params.content)) problem(['content'], 'with items, content is a list of parts');
      }
    }));
}

/** Parts that sign the body, whole or field by field. */
const BODY_PARTS: ReadonlySet<string> = new Set(['body', 'json', 'form']);

type Content = HmacParams['content'];
type TimestampSource = NonNullable<HmacParams['timestamp']>['source'];
const samePath = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((name, i) => name === b[i]);

/**
 * Whether the signed content covers the timestamp: a timestamp part, or the very header, field or
 * body the timestamp is read from (Linear's is in its signed body, Mailgun's a signed JSON field).
 */
function timestampSigned(content: Content, source: TimestampSource): boolean {
  if (!Array.isArray(content)) return source.from === 'form'; // Twilio's builder signs the form's fields
  return content.some((part) => {
    switch (part.part) {
      case 'timestamp': return true;
      case 'body': return source.from === 'json' || source.from === 'form';
      case 'header': return source.from === 'header' && part.name === source.name;
      case 'json': return source.from === 'json' && samePath(part.path, source.path);
      case 'form': return source.from === 'form' && part.name === source.name;
      default: return false;
    }
  });
}

let schema: ReturnType<typeof buildHmacParamsSchema> | undefined;
/** The schema of HMAC parameters, built on first use (for validation, and for the OpenAPI document later). */
export const hmacParamsSchema = () => (schema ??= buildHmacParamsSchema());

/** The outcome of {@link validateHmacParams}: the parameters (header names lower-cased), or the first problem and its field. */
export type HmacParamsCheck = { ok: true; params: HmacParams } | { ok: false; field: string; message: string };

/**
 * Checks HMAC parameters given as data (a `custom` trigger's settings). The message names the
 * field, as `signature.list.separator: …`, so it can be the text of a 400 `validation_error`.
 */
export function validateHmacParams(value: unknown): HmacParamsCheck {
  // The input is reported so a missing field can be told from a wrong one.
  const parsed = hmacParamsSchema().safeParse(value, { reportInput: true });
  if (parsed.success) return { ok: true, params: parsed.data as HmacParams };
  let issue = parsed.error.issues[0]!;
  let prefix: PropertyKey[] = [];
  // A union (content: parts or a builder) reports each branch: name the deepest problem found.
  while (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const deepest = issue.errors.map((errors) => errors[0]).filter((e) => e !== undefined).sort((a, b) => b.path.length - a.path.length)[0];
    if (!deepest || deepest.path.length === 0) break;
    prefix = [...prefix, ...issue.path];
    issue = deepest;
  }
  // An unknown field is named itself, not by the object that holds it.
  const path = [...prefix, ...issue.path, ...(issue.code === 'unrecognized_keys' ? [issue.keys[0]!] : [])];
  const field = path.map(String).join('.') || '(settings)';
  return { ok: false, field, message: `${field}: ${describeIssue(issue, prefix.length === 0 ? hmacParamsSchema() : undefined)}` };
}

/** Issues in words: one formatter for every route (`shared/validation-messages.ts`). */
export { describeIssue };
