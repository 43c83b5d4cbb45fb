import { AppError } from '../../shared/errors.js';
import { isPlainObject } from '../../shared/json.js';
import type { WebhookBody } from './body.js';
import { headerValue } from './headers.js';
import type { BodyRule, JsonPath } from './senders/catalog-types.js';

/**
 * Refuses a verified request whose body is not what its sender's row `accepts`: another media type
 * (415 `unsupported_media_type`), not a JSON object, or without a member its message kind carries
 * (400 `validation_error`). One check for every row that states a rule: no sender is named here.
 */
export function checkBodyRule(rule: BodyRule, headers: Readonly<Record<string, string>>, body: WebhookBody): void {
  if (rule.content_type !== undefined && mediaTypeOf(headers) !== rule.content_type) {
    throw new AppError('unsupported_media_type', undefined, undefined, `this sender's deliveries are ${rule.content_type}`);
  }
  if (rule.json === 'object' && !(body.kind === 'json' && isPlainObject(body.value))) {
    throw new AppError('validation_error', undefined, undefined, 'the body must be a JSON object');
  }
  for (const required of rule.requires ?? []) {
    if (headerValue(headers, required.when_header) !== required.equals) continue;
    const value = body.kind === 'json' ? memberAt(body.value, required.path) : undefined;
    if (value === undefined || value === null) {
      throw new AppError('validation_error', undefined, undefined, `a ${required.equals} carries ${required.path.join('.')}`);
    }
  }
}

const mediaTypeOf = (headers: Readonly<Record<string, string>>) => (headerValue(headers, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();

/** The value at `path`, own properties only. */
function memberAt(root: unknown, path: JsonPath): unknown {
  let value = root;
  for (const name of path) {
    if (!isPlainObject(value) || !Object.hasOwn(value, name)) return undefined;
    value = value[name];
  }
  return value;
}
