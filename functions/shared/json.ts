import { AppError } from './errors.js';

/** Deepest JSON nesting accepted in any request body. */
export const MAX_JSON_DEPTH = 256;

/**
 * Depth of the deepest array/object in a JSON text, scanning once and skipping strings.
 * Done before `JSON.parse` so a 10,000-deep body is refused without building it.
 */
export function jsonNestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return deepest;
}

/**
 * The index after the quote that closes the string opening at `start`, or -1 when none does.
 * A quote closes it unless an odd run of backslashes precedes it: the run's first backslash
 * starts an escape, since the character before the run is not a backslash. So a string is
 * skipped with `indexOf`, at native speed, whatever it holds.
 */
export function jsonStringEnd(text: string, start: number): number {
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    if (end === -1) return -1;
    let run = end - 1;
    for (let c = text.charCodeAt(run); c === 0x5c /* \ */; c = text.charCodeAt(run)) run--;
    if (((end - 1 - run) & 1) === 0) return end + 1;
  }
}

/** Strict UTF-8 decoder: a body with invalid bytes is refused, not silently "repaired". */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new AppError('validation_error', undefined, undefined, 'the body is not valid UTF-8');
  }
}

/** Parses a JSON request body: valid UTF-8, at most {@link MAX_JSON_DEPTH} deep, else `validation_error`. */
export function parseJson(bytes: Uint8Array): unknown {
  const text = decodeUtf8(bytes);
  if (jsonNestingDepth(text) > MAX_JSON_DEPTH) throw new AppError('validation_error', undefined, undefined, `the body's JSON is nested more than ${MAX_JSON_DEPTH} deep`);
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('validation_error', undefined, undefined, 'the body is not valid JSON');
  }
}

/**
 * The JSON value of `text`, or `undefined` when it is not JSON or nests deeper than
 * {@link MAX_JSON_DEPTH}: for JSON read before a request is verified (signed fields, a sender's
 * message), where an unsigned body must not make the receiver build a 1 MB-deep structure first.
 */
export function parseJsonWithinDepth(text: string): unknown {
  if (!nestsWithin(text, MAX_JSON_DEPTH)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether `text` nests at most `max` deep (`jsonNestingDepth(text) <= max`), for the JSON the
 * signature verifiers read. A text with at most `max` opening brackets cannot nest deeper,
 * whatever its strings hold, and counting them is a native search (a 1 KB webhook: 0.1 µs, where
 * the scan takes 0.8). A text with more is scanned skipping each string with `indexOf`
 * ({@link jsonStringEnd}): character by character, the scan took 300 µs of a 100 KB body, six
 * times its `JSON.parse`. (Not `jsonNestingDepth` itself: the objects bundle, at 297 KB of its
 * 300 KB, loads that one and must not grow.)
 */
export function nestsWithin(text: string, max: number): boolean {
  let brackets = 0;
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++brackets > max) return depthSkippingStrings(text) <= max;
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) if (++brackets > max) return depthSkippingStrings(text) <= max;
  return true;
}

/** `jsonNestingDepth(text)`, with each string skipped by {@link jsonStringEnd}. */
function depthSkippingStrings(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = jsonStringEnd(text, i);
      if (end === -1) break; // an unterminated string runs to the end
      i = end - 1;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return deepest;
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at `path` of plain objects, own members only (never an inherited one such as `constructor`). */
export function valueAt(root: unknown, path: readonly string[]): unknown {
  let value = root;
  for (const segment of path) {
    if (!isPlainObject(value) || !Object.hasOwn(value, segment)) return undefined;
    value = value[segment];
  }
  return value;
}
