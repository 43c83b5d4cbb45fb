import { isPlainObject } from '../../shared/json.js';
import type { WebhookBody } from './body.js';

/*
 * Where a sender's requests carry a secret in clear, as its catalog row says (`secret_fields`):
 * a static token header (GitLab, Telegram), a handshake's secret (Asana's `X-Hook-Secret`,
 * Notion's `verification_token`), Graph's `clientState`, Meta's `hub.verify_token`. Stored requests
 * show the redaction marker there, and flows never see them: a flow's input goes into Step
 * Functions' history and the flow's own logs, where no credential belongs.
 */

/** One place a sender puts a secret. Names are lower case. */
export type SecretField =
  | { from: 'header'; name: string }
  | { from: 'query'; name: string }
  /** A member of the JSON body; `*` stands for every element of an array (Graph's `value[*].clientState`). */
  | { from: 'json'; path: string[] }
  /** The header named by the pasted secret's `Name: value` line (Okta, BigCommerce: the user chooses it). */
  | { from: 'header_named_by_secret' };

/** The secret fields of one trigger, resolved against its secrets: concrete header names, query names and JSON paths. */
export interface SecretLocations {
  headers: ReadonlySet<string>;
  query: ReadonlySet<string>;
  jsonPaths: readonly (readonly string[])[];
}

/** What is never kept or handed on, whoever the sender: credentials a client, browser or proxy attaches, and the trigger's API key. */
export const ALWAYS_SECRET_HEADERS: ReadonlySet<string> = new Set(['x-api-key', 'authorization', 'proxy-authorization', 'cookie']);
export const ALWAYS_SECRET_QUERY: ReadonlySet<string> = new Set(['api_key']);

export const NO_SECRET_FIELDS: SecretLocations = { headers: ALWAYS_SECRET_HEADERS, query: ALWAYS_SECRET_QUERY, jsonPaths: [] };

/** A header line's name, lower case (`Authorization: s3cret` → `authorization`); undefined when the secret is not one. */
const headerLineName = (secret: string): string | undefined => /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:/.exec(secret)?.[1]?.toLowerCase();

/** A row's secret fields, with the headers its pasted secrets name, on top of those always secret. */
export function secretLocations(fields: readonly SecretField[] | undefined, secrets: readonly string[]): SecretLocations {
  if (!fields || fields.length === 0) return NO_SECRET_FIELDS;
  const headers = new Set(ALWAYS_SECRET_HEADERS);
  const query = new Set(ALWAYS_SECRET_QUERY);
  const jsonPaths: string[][] = [];
  for (const field of fields) {
    if (field.from === 'header') headers.add(field.name);
    else if (field.from === 'query') query.add(field.name);
    else if (field.from === 'json') jsonPaths.push(field.path);
    else for (const secret of secrets) {
      const name = headerLineName(secret);
      if (name !== undefined) headers.add(name);
    }
  }
  return { headers, query, jsonPaths };
}

/** `values` with each named one replaced by `marker`. */
export const redactNamed = (values: Record<string, string>, names: ReadonlySet<string>, marker: string): Record<string, string> =>
  Object.fromEntries(Object.entries(values).map(([name, value]) => [name, names.has(name.toLowerCase()) ? marker : value]));

/** `values` without the named ones. */
export const withoutNamed = (values: Record<string, string>, names: ReadonlySet<string>): Record<string, string> =>
  Object.fromEntries(Object.entries(values).filter(([name]) => !names.has(name.toLowerCase())));

/**
 * A copy of `value` with the members at `paths` replaced by `marker`, or `value` itself when none
 * is present (`changed` false). Only own members are followed; nothing is added.
 */
export function redactJsonPaths(value: unknown, paths: readonly (readonly string[])[], marker: string): { value: unknown; changed: boolean } {
  let changed = false;
  const walk = (node: unknown, path: readonly string[]): unknown => {
    if (path.length === 0) {
      changed = true;
      return marker;
    }
    const [step, ...rest] = path as [string, ...string[]];
    if (Array.isArray(node)) {
      if (step === '*') return node.map((item) => walk(item, rest));
      const index = /^\d+$/.test(step) ? Number(step) : -1;
      if (index < 0 || index >= node.length) return node;
      const copy = [...node];
      copy[index] = walk(node[index], rest);
      return copy;
    }
    if (!isPlainObject(node) || !Object.hasOwn(node, step)) return node;
    const copy: Record<string, unknown> = {};
    // defineProperty keeps a `__proto__` member a member, as JSON.parse made it.
    for (const [key, member] of Object.entries(node)) {
      Object.defineProperty(copy, key, { value: key === step ? walk(member, rest) : member, enumerable: true, writable: true, configurable: true });
    }
    return copy;
  };
  const redacted = paths.reduce<unknown>((node, path) => walk(node, path), value);
  return { value: changed ? redacted : value, changed };
}

/**
 * What a flow may see of a request: its headers without the secret ones (the API key and
 * `authorization` included, whoever the sender), its JSON body with secret members shown as `marker`.
 */
export function withheldFromFlow(headers: Record<string, string>, body: WebhookBody, secrets: SecretLocations, marker: string): { headers: Record<string, string>; body: WebhookBody } {
  const visible = withoutNamed(headers, secrets.headers);
  if (body.kind !== 'json' || secrets.jsonPaths.length === 0) return { headers: visible, body };
  return { headers: visible, body: { kind: 'json', value: redactJsonPaths(body.value, secrets.jsonPaths, marker).value } };
}
