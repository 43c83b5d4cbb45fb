/**
 * The trigger form's signature settings: the sender picker, built from the API's own catalog
 * (`GET /signature-services`) rather than a list kept here, with the chosen sender's docs link and
 * what to paste as its secret; and `custom`'s two kinds, its fields or the assembled-content HMAC
 * pasted as JSON.
 */
import { api } from '../api.js';
import { checkbox, el, field, select, textInput, withProgress } from '../dom.js';
import type { SignatureServiceCatalog, SignatureServiceListing } from '../../functions/domain/webhooks/senders/listing-types.js';

/** `custom`'s first kind: the signature in a header, with an optional prefix and timestamp header. */
export interface CustomFields {
  algorithm: string;
  header: string;
  encoding: string;
  prefix?: string;
  timestamp_header?: string;
}

/** `custom`'s assembled-content HMAC, as pasted: the API validates it and names the field that is wrong. */
export type CustomParams = { content: unknown } & Record<string, unknown>;

export type CustomSignature = CustomFields | CustomParams;

/** A trigger's signature as the API returns it (never its secret). */
export interface Signature {
  service: string;
  custom?: CustomSignature;
  /** Notion's verification token, in the one read of the trigger after its handshake. */
  verification_token?: string;
  /** Asana, Notion: the handshake window and the handover it took, if any (never the secret). */
  handshake_window_seconds?: number;
  handshake_awaited_until?: string | null;
  handed_over_at?: string | null;
  handed_over_source_ip?: string | null;
}

/** What the form sends as `signature`. */
export type SignatureBody = { service: string; secret: string; custom?: CustomSignature; verify_token?: string } | null;

const isParams = (custom: CustomSignature | undefined): custom is CustomParams => custom !== undefined && 'content' in custom;

let catalog: Promise<SignatureServiceCatalog> | undefined;

/** The sender catalog, read once a page load (it changes only with a deployment); a failed read is tried again by the next form. */
export function senderCatalog(): Promise<SignatureServiceCatalog> {
  catalog ??= api<SignatureServiceCatalog>('GET', '/signature-services').catch((error: unknown) => {
    catalog = undefined;
    throw error;
  });
  return catalog;
}

/** The senders by category: the categories in the order their first sender comes, each's senders in catalog order. */
export function byCategory(services: readonly SignatureServiceListing[]): Map<string, SignatureServiceListing[]> {
  const groups = new Map<string, SignatureServiceListing[]>();
  for (const service of services) {
    const group = groups.get(service.category);
    if (group) group.push(service);
    else groups.set(service.category, [service]);
  }
  return groups;
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A link to a sender's own page, in a new tab (which screen readers are told), giving that page neither this one nor its address. */
const externalLink = (href: string, text: string) =>
  el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, text, el('span', { class: 'visually-hidden' }, ' (opens in a new tab)'));

function radio(id: string, name: string, label: string, checked: boolean): [HTMLElement, HTMLInputElement] {
  const input = el('input', { type: 'radio', id, name, checked });
  return [el('label', { class: 'check', for: id }, input, label), input];
}

const CUSTOM_JSON_EXAMPLE = '{"algorithm": "sha256", "key": {"format": "text"}, "content": [{"part": "body"}], "signature": {"from": "header", "name": "x-signature"}, "encoding": "hex"}';

export interface SignatureFields {
  /** The "Enable signature verification" checkbox and the settings it shows. */
  elements: HTMLElement[];
  /**
   * The `signature` to send, or null when verification is off. Throws an Error in words (and
   * focuses the field) when the pasted JSON does not parse, so nothing is sent.
   */
  body(): SignatureBody;
  /** The settings are `current`'s and no new secret is given: a change can leave the stored signature alone. */
  unchanged(): boolean;
  /** The sender chosen, as the catalog lists it; `undefined` with verification off or before the catalog arrives. */
  sender(): SignatureServiceListing | undefined;
  /** Calls `listener` whenever the chosen sender may have changed. */
  onSenderChange(listener: () => void): void;
}

/**
 * The signature part of the trigger form, starting from `current` (a trigger being changed) or
 * empty. Failures to read the catalog go to `alert`.
 */
export function signatureFields(options: { current: Signature | null | undefined; alert: HTMLElement }): SignatureFields {
  const { current, alert } = options;
  const [verifyRow, verify] = checkbox('verify', 'Enable signature verification', Boolean(current));

  // Until the catalog arrives the picker holds the current service, so the form reads as the trigger is.
  const service = el('select', { 'aria-busy': 'true' }, el('option', { value: current?.service ?? '' }, current?.service ?? 'Loading senders…'));
  const docs = el('p', { class: 'sender-docs' });
  const leftOut = el('div');
  const serviceField = field('service', 'Service', service);
  serviceField.append(docs, leftOut);
  const listed = new Map<string, SignatureServiceListing>();

  const secret = el('input', { type: 'password', autocomplete: 'off' });
  const secretHint = el('span');
  // A sender whose handshake carries a token the user chooses (Meta): its own field, never the secret.
  const verifyToken = el('input', { type: 'password', autocomplete: 'off' });
  const verifyTokenField = field('verify-token', 'Verify token', verifyToken, 'The verify token you type into the sender\'s dashboard: any text of your choosing, not the secret. Required.');

  // `custom`: its first kind's fields, or the assembled-content HMAC as JSON.
  const currentCustom = current?.custom;
  const [fieldsRow, fieldsKind] = radio('custom-kind-fields', 'custom-kind', 'Fields: a header, a prefix, a timestamp', !isParams(currentCustom));
  const [jsonRow, jsonKind] = radio('custom-kind-json', 'custom-kind', 'Assembled-content HMAC, pasted as JSON', isParams(currentCustom));
  const firstKind = isParams(currentCustom) ? undefined : currentCustom;
  const algorithm = select([['sha256', 'SHA-256'], ['sha1', 'SHA-1'], ['sha512', 'SHA-512']], firstKind?.algorithm);
  const header = textInput(firstKind?.header);
  const encoding = select([['hex', 'Hex'], ['base64', 'Base64']], firstKind?.encoding);
  const prefix = textInput(firstKind?.prefix);
  const timestampHeader = textInput(firstKind?.timestamp_header);
  const initialJson = isParams(currentCustom) ? JSON.stringify(currentCustom, null, 2) : '';
  const json = el('textarea', { rows: '10', spellcheck: 'false', autocomplete: 'off', class: 'code' });
  json.value = initialJson;
  json.addEventListener('input', () => json.removeAttribute('aria-invalid'));
  const fieldsPart = el('div', {},
    field('algorithm', 'Algorithm', algorithm), field('signature-header', 'Signature header', header),
    field('encoding', 'Encoding', encoding), field('prefix', 'Signature prefix', prefix, 'Optional, e.g. sha256='),
    field('timestamp-header', 'Timestamp header', timestampHeader, 'Optional: signed with the body and checked for freshness.'));
  const jsonPart = el('div', {},
    field('custom-json', 'HMAC settings (JSON)', json, el('span', {},
      'Any HMAC sender: the algorithm, how the key is read, the signed content in order, where the signature is, its encoding and an optional timestamp rule, as the API documents them. For example: ',
      el('code', {}, CUSTOM_JSON_EXAMPLE))));
  const custom = el('fieldset', {}, el('legend', {}, 'Custom HMAC'),
    el('fieldset', { class: 'choice' }, el('legend', {}, 'Settings'), fieldsRow, jsonRow),
    fieldsPart, jsonPart);

  const section = el('fieldset', { hidden: !verify.checked }, el('legend', {}, 'Signature'),
    serviceField, field('secret', 'Signing secret', secret, secretHint), verifyTokenField, custom);

  const senderListeners: (() => void)[] = [];
  /** The chosen sender's docs link and secret label; `custom`'s fields when it is chosen. */
  const show = () => {
    const chosen = listed.get(service.value);
    docs.replaceChildren(...(chosen ? [externalLink(chosen.docs_url, `How ${chosen.name} signs`)] : []));
    secretHint.textContent = [
      chosen && `${chosen.secret_label}.`,
      chosen?.limits,
      current && 'Leave empty to keep the current secret, unless you change the service.',
    ].filter(Boolean).join(' ');
    custom.hidden = service.value !== 'custom';
    verifyTokenField.hidden = chosen?.needs_verify_token !== true;
    fieldsPart.hidden = !fieldsKind.checked;
    jsonPart.hidden = !jsonKind.checked;
    for (const listener of senderListeners) listener();
  };
  verify.addEventListener('change', () => {
    section.hidden = !verify.checked;
    for (const listener of senderListeners) listener();
  });
  service.addEventListener('change', show);
  fieldsKind.addEventListener('change', show);
  jsonKind.addEventListener('change', show);
  show();

  void withProgress(service, alert, async () => {
    const { services, left_out } = await senderCatalog();
    for (const s of services) listed.set(s.id, s);
    service.replaceChildren(...[...byCategory(services)].map(([category, senders]) =>
      el('optgroup', { label: capitalized(category) }, ...senders.map((s) => el('option', { value: s.id }, s.name)))));
    service.value = current?.service ?? services[0]?.id ?? '';
    leftOut.replaceChildren(...(left_out.length === 0 ? [] : [el('details', { class: 'left-out' },
      el('summary', {}, `Not verifiable here: ${left_out.map((s) => s.name).join(', ')}`),
      el('ul', {}, ...left_out.map((s) => el('li', {}, externalLink(s.docs_url, s.name), `: ${s.reason}`))))]));
    show();
  });

  const fieldsBody = (): CustomFields => ({
    algorithm: algorithm.value,
    // The API stores header names lower-cased; so the comparison below sees no change where there is none.
    header: header.value.trim().toLowerCase(),
    encoding: encoding.value,
    ...(prefix.value && { prefix: prefix.value }),
    ...(timestampHeader.value.trim() && { timestamp_header: timestampHeader.value.trim().toLowerCase() }),
  });
  /** The pasted JSON as an object; the API checks the rest and names the field that is wrong. */
  const pastedParams = (): CustomParams => {
    const refuse = (message: string): never => {
      json.setAttribute('aria-invalid', 'true');
      json.focus();
      throw new Error(message);
    };
    let value: unknown;
    try {
      value = JSON.parse(json.value);
    } catch (error) {
      return refuse(`The HMAC settings are not valid JSON: ${error instanceof Error ? error.message : String(error)}. Nothing was sent.`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !('content' in value)) {
      return refuse('The HMAC settings must be a JSON object with algorithm, key, content, signature and encoding. Nothing was sent.');
    }
    return value as CustomParams;
  };
  const sameFields = (a: CustomSignature | undefined, b: CustomFields) =>
    a !== undefined && !isParams(a) && (['algorithm', 'header', 'encoding', 'prefix', 'timestamp_header'] as const).every((k) => (a[k] ?? '') === (b[k] ?? ''));
  const sameCustom = () => (jsonKind.checked ? isParams(currentCustom) && json.value === initialJson : sameFields(currentCustom, fieldsBody()));

  return {
    elements: [verifyRow, section],
    body: () => (verify.checked
      ? {
        service: service.value, secret: secret.value,
        ...(service.value === 'custom' && { custom: jsonKind.checked ? pastedParams() : fieldsBody() }),
        ...(!verifyTokenField.hidden && { verify_token: verifyToken.value }),
      }
      : null),
    sender: () => (verify.checked ? listed.get(service.value) : undefined),
    onSenderChange: (listener) => senderListeners.push(listener),
    unchanged: () => secret.value === '' && verifyToken.value === '' && (current
      ? verify.checked && current.service === service.value && (service.value !== 'custom' || sameCustom())
      : !verify.checked),
  };
}
