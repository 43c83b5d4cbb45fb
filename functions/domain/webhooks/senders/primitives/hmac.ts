// HMAC over content assembled from the request: the primitive behind every HMAC sender of the
// catalog and behind `custom`. A sender is a row of parameters (`HmacParams`); nothing here names
// a sender, except the Twilio content builder (why: catalog-types.ts, `ContentBuilder`).
import { isAscii, isUtf8 } from 'node:buffer';
import { createHash, createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { parseJsonWithinDepth } from '../../../../shared/json.js';
import { headerValue } from '../../headers.js';
import { constantTimeEqual, decodeSignature } from '../../signatures/hmac.js';
import { twilioSignedContent } from '../../signatures/twilio.js';
import type {
  ContentPart,
  HmacKey,
  HmacParams,
  JsonPath,
  SignatureList,
  TimestampFormat,
  TimestampRule,
} from '../catalog-types.js';
import type { VerifyContext } from '../context.js';
import { ARRAY_INDEX, hasControlBytes, JsonContainer, scanJson } from './json-scan.js';

/** What the HMAC primitive reads: no key fetcher, it never goes to the network. */
export type HmacInput = Pick<VerifyContext, 'request' | 'secrets' | 'method'>;

/** Numbered signature headers beyond this many are not read: a bound on the work one request can ask for (DocuSign sends one per active key). */
export const MAX_NUMBERED_SIGNATURES = 100;

type Bytes = string | Uint8Array;

/**
 * True when the request carries a valid signature, by any of `input.secrets`, over the content
 * `params` describe, and (when `params.timestamp` is set) a fresh signed timestamp.
 * Pure and synchronous; returns `false` for anything wrong with the request (a missing or
 * malformed header, a body that is not JSON, a stale timestamp) and never throws on it.
 * An empty secret, or one that decodes to no key, matches nothing: an empty HMAC key is forgeable.
 */
export function verifyHmac(params: HmacParams, input: HmacInput): boolean {
  const fields = new RequestFields(input, params.items !== undefined);
  if (params.items) {
    const items = arrayItems(fields.json(params.items.path));
    if (!items || items.length === 0) return false;
    const timestamp = params.timestamp ? readTimestamp(params.timestamp, fields, undefined, input.request.nowSeconds) : false;
    if (timestamp === undefined) return false;
    // Every item is signed on its own, so every one must verify: an unsigned item slipped in beside
    // a genuine one would otherwise ride on its signature.
    for (const item of items) {
      if (!verifyScope(params, input, fields, timestamp, item)) return false;
    }
    return true;
  }
  const read = readSignatures(params, fields, undefined);
  if (!read) return false;
  const timestamp = params.timestamp ? readTimestamp(params.timestamp, fields, read.list, input.request.nowSeconds) : false;
  if (timestamp === undefined) return false;
  return matches(params, input, read.signatures, contentsOf(params, input, fields, timestamp, undefined));
}

/** One item of an `items` body: its own signature over its own fields. */
function verifyScope(params: HmacParams, input: HmacInput, fields: RequestFields, timestamp: string | false, item: unknown): boolean {
  const read = readSignatures(params, fields, item);
  return read !== undefined && matches(params, input, read.signatures, contentsOf(params, input, fields, timestamp, item));
}

/** True when some secret's HMAC of some content alternative equals some signature. */
function matches(params: HmacParams, input: HmacInput, signatures: readonly Buffer[], contents: Iterable<readonly Bytes[]> | undefined): boolean {
  if (signatures.length === 0 || contents === undefined) return false;
  // Plain loops: usually one content, one secret and one signature.
  for (const content of contents) {
    for (const secret of input.secrets) {
      const key = preparedKey(params.key, secret);
      if (!key) continue;
      const mac = createHmac(params.algorithm, key);
      for (const part of content) mac.update(part);
      const expected = mac.digest();
      for (const signature of signatures) if (constantTimeEqual(signature, expected)) return true;
    }
  }
  return false;
}

/* Content ------------------------------------------------------------------------------------ */

/** The content alternatives (usually one); `undefined` when a part the content needs is missing. */
function contentsOf(params: HmacParams, input: HmacInput, fields: RequestFields, timestamp: string | false, item: unknown): Iterable<readonly Bytes[]> | undefined {
  const { content } = params;
  if (!Array.isArray(content)) {
    const signed = twilioSignedContent(input.request);
    return signed && twilioAlternatives(signed.urls, signed.params);
  }
  const parts: Bytes[] = [];
  for (const part of content) {
    const bytes = partBytes(part, input, fields, timestamp, item);
    if (bytes === undefined) return undefined;
    // Adjacent text is joined: one HMAC update per run of text costs less than one per part
    // (Adyen's eight fields and seven separators are one update, as in Adyen's own library).
    const last = parts.length - 1;
    if (typeof bytes === 'string' && typeof parts[last] === 'string') parts[last] += bytes;
    else parts.push(bytes);
  }
  return [parts];
}

/**
 * The bytes `params` sign in a request that verified, in order (for a body of signed items, every
 * item's, one after another), with the signed timestamp's text in its place, or `''` for
 * `withoutTimestamp` (what a sender's retry, signed anew, has in common with the first delivery).
 * `undefined` when a part is missing. For keys taken from signed material only (`replay-key.ts`).
 */
export function signedContent(params: HmacParams, input: HmacInput, options: { withoutTimestamp?: boolean } = {}): Bytes[] | undefined {
  const fields = new RequestFields(input, params.items !== undefined);
  const read = params.items ? undefined : readSignatures(params, fields, undefined);
  const timestamp = !params.timestamp || options.withoutTimestamp ? '' : timestampText(params.timestamp, fields, read?.list);
  if (timestamp === undefined) return undefined;
  const scopes = params.items ? arrayItems(fields.json(params.items.path)) : [undefined];
  if (!scopes) return undefined;
  const bytes: Bytes[] = [];
  for (const item of scopes) {
    // The first alternative: Twilio's are spellings of one URL, and the trigger's URL is fixed.
    const [first] = contentsOf(params, input, fields, timestamp, item) ?? [];
    if (!first) return undefined;
    bytes.push(...first);
  }
  return bytes;
}

/**
 * The signed timestamp of a request that verified, in epoch milliseconds, when `params` sign it as
 * a part of their content (so nobody without the secret can change it); `undefined` otherwise.
 * Every replay of a delivery carries the same one: `replay-key.ts` keys a record on it.
 */
export function signedTimestampMs(params: HmacParams, input: HmacInput): number | undefined {
  if (!params.timestamp || params.items || !Array.isArray(params.content) || !params.content.some((part) => part.part === 'timestamp')) return undefined;
  const fields = new RequestFields(input);
  const read = readSignatures(params, fields, undefined);
  const text = timestampText(params.timestamp, fields, read?.list);
  const seconds = text === undefined ? undefined : parseTimestamp(text, params.timestamp.format);
  return seconds === undefined ? undefined : Math.floor(seconds * 1000);
}

function* twilioAlternatives(urls: Iterable<string>, formParams: string): Generator<readonly Bytes[]> {
  for (const url of urls) yield [url, formParams];
}

function partBytes(part: ContentPart, input: HmacInput, fields: RequestFields, timestamp: string | false, item: unknown): Bytes | undefined {
  switch (part.part) {
    case 'body':
      return input.request.rawBody;
    case 'url':
      return input.request.url;
    case 'method':
      return input.method;
    case 'timestamp':
      return timestamp === false ? undefined : timestamp;
    case 'literal':
      return part.text;
    case 'header':
      return headerValue(input.request.headers, part.name);
    case 'json': {
      const value = item === undefined ? fields.json(part.path) : valueAt(item, part.path);
      if (part.optional && (value === undefined || value === null)) return '';
      return scalarText(value);
    }
    case 'form':
      return fields.form(part.name);
    default:
      return undefined;
  }
}

/* Signatures --------------------------------------------------------------------------------- */

interface ReadSignatures {
  signatures: Buffer[];
  /** The list's items, when the signature is a list (a timestamp may be one of them). */
  list?: [string, string][];
}

/** The decoded candidate signatures; `undefined` when the field is missing or not of the stated form. */
function readSignatures(params: HmacParams, fields: RequestFields, item: unknown): ReadSignatures | undefined {
  const { signature: source, encoding } = params;
  if (source.from === 'numbered_headers') {
    const signatures: Buffer[] = [];
    for (const text of numberedHeaders(fields.input.request.headers, source.name_prefix)) {
      const signature = decodeSignature(text, encoding);
      if (signature) signatures.push(signature);
    }
    return { signatures };
  }
  const text =
    source.from === 'header'
      ? headerValue(fields.input.request.headers, source.name)
      : source.from === 'form'
        ? fields.form(source.name)
        : scalarText(item === undefined ? fields.json(source.path) : valueAt(item, source.path));
  if (text === undefined || text === '') return undefined;
  const prefix = source.prefix ?? '';
  if (!text.startsWith(prefix)) return undefined;
  const rest = prefix === '' ? text : text.slice(prefix.length);
  if (!source.list) {
    const signature = decodeSignature(rest, encoding);
    return signature ? { signatures: [signature] } : undefined;
  }
  const list = parseList(rest, source.list);
  const signatures: Buffer[] = [];
  for (const [key, value] of list) {
    if (source.list.key !== undefined && key !== source.list.key) continue;
    // A malformed candidate is skipped, not fatal: another may be the one that matches.
    const signature = decodeSignature(value, encoding);
    if (signature) signatures.push(signature);
  }
  return { signatures, list };
}

/** `k=v` items (or `k,v`, `k|v`), trimmed; items without the assignment character are ignored. */
function parseList(text: string, list: SignatureList): [string, string][] {
  const items: [string, string][] = [];
  for (const raw of text.split(list.separator)) {
    const at = raw.indexOf(list.assign);
    if (at < 0) continue;
    items.push([raw.slice(0, at).trim(), raw.slice(at + 1).trim()]);
  }
  return items;
}

/** Values of the headers `<prefix>1`, `<prefix>2`, … in any order, at most {@link MAX_NUMBERED_SIGNATURES}. */
function numberedHeaders(headers: Readonly<Record<string, string>>, prefix: string): string[] {
  const values: string[] = [];
  for (const name of Object.keys(headers)) {
    if (!name.startsWith(prefix) || !/^[1-9]\d{0,2}$/.test(name.slice(prefix.length))) continue;
    const value = headerValue(headers, name);
    if (value !== undefined) values.push(value);
    if (values.length === MAX_NUMBERED_SIGNATURES) break;
  }
  return values;
}

/* Timestamps --------------------------------------------------------------------------------- */

const UNIX_SECONDS = /^\d{1,12}$/;
const UNIX_MILLISECONDS = /^\d{1,15}$/;
/** RFC 3339 `date-time`, with up to nanoseconds (Twitch sends nine digits) and `Z` or an offset. */
const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** The timestamp's text as sent, when it is well-formed and within the tolerance; `undefined` when the request fails the rule. */
function readTimestamp(rule: TimestampRule, fields: RequestFields, list: [string, string][] | undefined, nowSeconds: number): string | undefined {
  const text = timestampText(rule, fields, list);
  if (text === undefined) return undefined;
  const seconds = parseTimestamp(text, rule.format);
  if (seconds === undefined || !(Math.abs(nowSeconds - seconds) <= rule.tolerance_seconds)) return undefined;
  return text;
}

function timestampText(rule: TimestampRule, fields: RequestFields, list: [string, string][] | undefined): string | undefined {
  const { source } = rule;
  switch (source.from) {
    case 'header':
      return headerValue(fields.input.request.headers, source.name);
    case 'form':
      return fields.form(source.name);
    case 'json':
      return scalarText(fields.json(source.path));
    case 'signature_list': {
      let found: string | undefined;
      for (const [key, value] of list ?? []) {
        if (key !== source.key) continue;
        if (found !== undefined) return undefined; // two timestamps: which one was signed is ambiguous
        found = value;
      }
      return found;
    }
    default:
      return undefined;
  }
}

/** Seconds since the epoch, or `undefined` when `text` is not of `format` (signs, decimals and junk refused). */
export function parseTimestamp(text: string, format: TimestampFormat): number | undefined {
  switch (format) {
    case 'unix_seconds':
      return UNIX_SECONDS.test(text) ? Number(text) : undefined;
    case 'unix_milliseconds':
      return UNIX_MILLISECONDS.test(text) ? Number(text) / 1000 : undefined;
    case 'rfc3339': {
      const match = RFC3339.exec(text);
      if (!match) return undefined;
      const [, date, time, fraction = '', zone = 'Z'] = match;
      // Date.parse takes at most milliseconds; finer digits cannot move a tolerance of seconds.
      const millis = Date.parse(`${date}T${time}.${fraction.slice(0, 3).padEnd(3, '0')}${zone.toUpperCase()}`);
      return Number.isNaN(millis) ? undefined : millis / 1000;
    }
    default:
      return undefined;
  }
}

/* Keys --------------------------------------------------------------------------------------- */

/**
 * Keys prepared once per row's key rule and secret: a receiver checks the same few secrets over
 * and over, and decoding and preparing a key is a measurable part of verifying a small body.
 * `null` remembers a secret that gives no key. Bounded per rule.
 */
const preparedKeys = new WeakMap<HmacKey, Map<string, KeyObject | null>>();
const MAX_PREPARED_KEYS = 256;

function preparedKey(rule: HmacKey, secret: string): KeyObject | undefined {
  let bySecret = preparedKeys.get(rule);
  if (!bySecret) preparedKeys.set(rule, (bySecret = new Map()));
  let key = bySecret.get(secret);
  if (key === undefined) {
    if (bySecret.size >= MAX_PREPARED_KEYS) bySecret.clear();
    const bytes = keyBytes(rule, secret);
    key = bytes && bytes.length > 0 ? createSecretKey(bytes) : null;
    bySecret.set(secret, key);
  }
  return key ?? undefined;
}

/** The key's bytes per `rule`; `undefined` when the secret is not of the stated encoding. */
export function keyBytes(rule: HmacKey, secret: string): Buffer | undefined {
  const text = rule.strip_prefix && secret.startsWith(rule.strip_prefix) ? secret.slice(rule.strip_prefix.length) : secret;
  if (text === '') return undefined;
  switch (rule.format) {
    case 'text':
      return Buffer.from(text, 'utf8');
    case 'hex':
      return decodeSignature(text, 'hex');
    case 'base64':
      // Padding is optional in secrets as dashboards show them; the letters must all be base64.
      return /^[A-Za-z0-9+/_-]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : undefined;
    case 'sha1_of_text':
      return createHash('sha1').update(text, 'utf8').digest();
    default:
      return undefined;
  }
}

/* Reading the request ------------------------------------------------------------------------ */

const NOT_PARSED = Symbol('not parsed');

/** The request's JSON and form bodies, each parsed at most once and only when a part needs it. */
class RequestFields {
  private jsonBody: unknown = NOT_PARSED;
  private formBody: Map<string, string | null> | undefined | typeof NOT_PARSED = NOT_PARSED;

  /** `items`: the body is a list of signed items, read a dozen fields an item (see {@link parseJsonBody}). */
  constructor(
    readonly input: HmacInput,
    private readonly items = false,
  ) {}

  /** The value at `path` of the JSON body; `undefined` when absent or the body is not JSON. */
  json(path: JsonPath): unknown {
    if (this.jsonBody === NOT_PARSED) this.jsonBody = parseJsonBody(this.input.request.rawBody, this.items);
    return valueAt(this.jsonBody, path);
  }

  /** A form field's decoded value; `undefined` when absent, repeated (ambiguous) or the body is not a form. */
  form(name: string): string | undefined {
    if (this.formBody === NOT_PARSED) this.formBody = parseFormBody(this.input.request.rawBody);
    return this.formBody?.get(name) ?? undefined;
  }
}

/**
 * The body as text when it is valid UTF-8 (a body with invalid bytes is refused, not "repaired").
 * Both checks are native (simdutf) and cost a few µs for 100 KB. An ASCII body, nearly every
 * webhook, decodes as Latin-1 to the same text in half the time of a UTF-8 decode.
 */
function decodeText(bytes: Uint8Array): string | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isAscii(bytes)) return buffer.toString('latin1');
  return isUtf8(bytes) ? buffer.toString('utf8') : undefined;
}

/**
 * When the HMAC primitive scans a JSON body rather than parsing it (json-scan.ts). The scan costs
 * little per byte and something per lookup; `JSON.parse` the reverse. A row reading a field or two
 * (Linear's timestamp) scans any body: 1 KB, 2.4 µs against 3.3 µs with the depth check; 100 KB,
 * 45 µs against 70 µs. A body of signed items is read a dozen fields an item (Adyen): it is parsed
 * below 4 KB, where `JSON.parse` and property reads cost half what the scan's lookups do.
 */
const SCAN_ITEMS_FROM_BYTES = 4096;

/**
 * The body as JSON, or `undefined`. It is read before the request is verified, so its nesting is
 * checked first, as for every body the gateway parses (shared/json.ts): an unsigned body must not
 * make the receiver build a structure a megabyte deep. A compact ASCII body (nearly every
 * webhook) is checked and read by path without being built (json-scan.ts), but for a small body
 * of items.
 */
function parseJsonBody(bytes: Uint8Array, items: boolean): unknown {
  if ((!items || bytes.length >= SCAN_ITEMS_FROM_BYTES) && isAscii(bytes) && !hasControlBytes(bytes)) {
    return scanJson(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'))?.value;
  }
  const text = decodeText(bytes);
  return text === undefined ? undefined : parseJsonWithinDepth(text);
}

function parseFormBody(bytes: Uint8Array): Map<string, string | null> | undefined {
  const text = decodeText(bytes);
  if (text === undefined) return undefined;
  const form = new Map<string, string | null>();
  // URLSearchParams never throws: a stray `%` stays as it is, as browsers and frameworks read it.
  for (const [name, value] of new URLSearchParams(text)) form.set(name, form.has(name) ? null : value);
  return form;
}

/**
 * The value at `path` under `root`, own properties only (a path cannot reach `__proto__`'s
 * prototype); `root` is a parsed value or a scanned body's container.
 */
function valueAt(root: unknown, path: JsonPath): unknown {
  let value = root;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    if (Array.isArray(value)) {
      if (!ARRAY_INDEX.test(segment)) return undefined;
      value = value[Number(segment)];
    } else if (value instanceof JsonContainer) {
      value = value.get(segment);
    } else {
      // One keyed load: an own member is never undefined in parsed JSON, so `undefined` means absent or inherited.
      const member = (value as Record<string, unknown>)[segment];
      if (member === undefined || !Object.hasOwn(value, segment)) return undefined;
      value = member;
    }
  }
  return value;
}

/** The elements of an array, parsed or scanned; `undefined` for anything else. */
function arrayItems(value: unknown): readonly unknown[] | undefined {
  return value instanceof JsonContainer ? value.items() : Array.isArray(value) ? value : undefined;
}

/** A JSON scalar as the sender wrote it into the signed text: strings as is, integers and booleans as written. */
function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : undefined;
  if (typeof value === 'boolean') return String(value);
  return undefined;
}
