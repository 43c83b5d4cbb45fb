// A JSON body read by path without building it: what the HMAC primitive needs of a body is a few
// scalars (Linear's `webhookTimestamp`, Adyen's eight fields of each item), and building the whole
// value cost more than the HMAC itself (`JSON.parse` of a 100 KB body, 55 µs, beside its HMAC's 55 µs).
import { jsonStringEnd as stringEnd, MAX_JSON_DEPTH } from '../../../../shared/json.js';

/** Array indexes a path may name: as `JSON.parse`'s arrays are read by `valueAt` in hmac.ts. */
export const ARRAY_INDEX = /^(?:0|[1-9]\d{0,8})$/;
/** RFC 8259's number, which is what `JSON.parse` accepts (and `Number()` reads the same). */
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const QUOTE = 0x22;

/**
 * An array or object of a scanned body, read member by member ({@link JsonContainer.get}); its
 * scalars come out as `JSON.parse` would give them, containers as further `JsonContainer`s.
 */
export class JsonContainer {
  constructor(
    private readonly body: ScannedJson,
    readonly start: number,
    readonly isArray: boolean,
  ) {}

  /** The member named `segment` (the last of repeated names, as `JSON.parse` keeps), or the element it indexes; `undefined` when none. */
  get(segment: string): unknown {
    if (this.isArray) {
      if (!ARRAY_INDEX.test(segment)) return undefined;
      const at = this.body.elements(this.start)[Number(segment)];
      return at === undefined ? undefined : this.body.decode(at);
    }
    const at = this.body.members(this.start).get(segment);
    return at === undefined ? undefined : this.body.decode(at);
  }

  /** The elements of an array (`undefined` for an object). */
  items(): unknown[] | undefined {
    return this.isArray ? this.body.elements(this.start).map((at) => this.body.decode(at)) : undefined;
  }

  /** The value as `JSON.parse` builds it (for tests: a container's text is valid JSON on its own). */
  toValue(): unknown {
    return JSON.parse(this.body.text.slice(this.start, this.body.valueEnd(this.start)));
  }
}

/**
 * A JSON text checked once, as `JSON.parse` checks it, and read by path without building it.
 * Use {@link scanJson}: it answers `undefined` for exactly the texts `JSON.parse` refuses or that
 * nest deeper than {@link MAX_JSON_DEPTH} (as `parseJsonWithinDepth`), and nothing is built
 * before the depth is known. Texts with a character below U+0020 (newlines, tabs: pretty-printed
 * JSON) are not for it: the caller parses those (`hasControlBytes`); so no string needs its
 * characters checked one by one, only its escapes, which `JSON.parse` checks on the string alone.
 */
export class ScannedJson {
  /** Where each array or object ends (the index after its bracket), by where it starts. */
  private readonly ends = new Map<number, number>();
  /** Strings holding a backslash, by where they start: decoded by `JSON.parse`. */
  private readonly escaped = new Set<number>();
  private readonly memberIndex = new Map<number, Map<string, number>>();
  private readonly elementIndex = new Map<number, number[]>();
  /** The next backslash at or after the scan's position (`text.length` when none). */
  private nextBackslash = -1;
  rootStart = 0;

  constructor(readonly text: string) {}

  /** The value starting at `at` (no whitespace), as `JSON.parse` gives it; containers as {@link JsonContainer}. */
  decode(at: number): unknown {
    const { text } = this;
    const c = text.charCodeAt(at);
    switch (c) {
      case QUOTE: {
        const end = stringEnd(text, at);
        return this.escaped.has(at) ? JSON.parse(text.slice(at, end)) : text.slice(at + 1, end - 1);
      }
      case 0x7b:
        return new JsonContainer(this, at, false);
      case 0x5b:
        return new JsonContainer(this, at, true);
      case 0x74:
        return true;
      case 0x66:
        return false;
      case 0x6e:
        return null;
      default:
        NUMBER.lastIndex = at;
        NUMBER.test(text);
        return Number(text.slice(at, NUMBER.lastIndex));
    }
  }

  /** The index after the (checked) value starting at `at`. */
  valueEnd(at: number): number {
    const { text } = this;
    const c = text.charCodeAt(at);
    if (c === QUOTE) return stringEnd(text, at);
    if (c === 0x7b || c === 0x5b) return this.ends.get(at)!;
    if (c === 0x74 || c === 0x6e) return at + 4;
    if (c === 0x66) return at + 5;
    NUMBER.lastIndex = at;
    NUMBER.test(text);
    return NUMBER.lastIndex;
  }

  /** An object's members: name → where its value starts; a repeated name keeps its last value. */
  members(start: number): Map<string, number> {
    let members = this.memberIndex.get(start);
    if (members) return members;
    members = new Map();
    const { text } = this;
    let i = skipSpace(text, start + 1);
    for (let c = text.charCodeAt(i); c === QUOTE; c = text.charCodeAt(i)) {
      const name = this.decode(i) as string;
      const value = skipSpace(text, skipSpace(text, stringEnd(text, i)) + 1);
      members.set(name, value);
      i = skipSpace(text, this.valueEnd(value));
      if (unitAt(text, i) !== 0x2c) break;
      i = skipSpace(text, i + 1);
    }
    this.memberIndex.set(start, members);
    return members;
  }

  /** Where an array's elements start, in order. */
  elements(start: number): number[] {
    let elements = this.elementIndex.get(start);
    if (elements) return elements;
    elements = [];
    const { text } = this;
    let i = skipSpace(text, start + 1);
    if (unitAt(text, i) !== 0x5d) {
      for (;;) {
        elements.push(i);
        i = skipSpace(text, this.valueEnd(i));
        if (unitAt(text, i) !== 0x2c) break;
        i = skipSpace(text, i + 1);
      }
    }
    this.elementIndex.set(start, elements);
    return elements;
  }

  /* The check, once over the text: each returns the index after what it read, or -1 when it is not JSON. */

  check(): boolean {
    const end = this.value(0, 0);
    return end >= 0 && skipSpace(this.text, end) === this.text.length;
  }

  private value(from: number, depth: number): number {
    const { text } = this;
    const i = skipSpace(text, from);
    if (depth === 0) this.rootStart = i;
    const c = text.charCodeAt(i);
    switch (c) {
      case QUOTE:
        return this.string(i);
      case 0x7b:
        // Deeper than the limit is refused before anything below it is read, as jsonNestingDepth does.
        return depth >= MAX_JSON_DEPTH ? -1 : this.object(i, depth + 1);
      case 0x5b:
        return depth >= MAX_JSON_DEPTH ? -1 : this.array(i, depth + 1);
      case 0x74:
        return text.startsWith('true', i) ? i + 4 : -1;
      case 0x66:
        return text.startsWith('false', i) ? i + 5 : -1;
      case 0x6e:
        return text.startsWith('null', i) ? i + 4 : -1;
      default:
        NUMBER.lastIndex = i;
        return NUMBER.test(text) ? NUMBER.lastIndex : -1;
    }
  }

  private string(start: number): number {
    const { text } = this;
    const end = stringEnd(text, start);
    if (end < 0) return -1;
    if (this.nextBackslash < start) {
      const at = text.indexOf('\\', start);
      this.nextBackslash = at === -1 ? text.length : at;
    }
    if (this.nextBackslash < end) {
      // Its escapes checked as JSON.parse checks them, on this string alone.
      try {
        JSON.parse(text.slice(start, end));
      } catch {
        return -1;
      }
      this.escaped.add(start);
    }
    return end;
  }

  private object(start: number, depth: number): number {
    const { text } = this;
    let i = skipSpace(text, start + 1);
    if (unitAt(text, i) !== 0x7d) {
      for (;;) {
        if (unitAt(text, i) !== QUOTE) return -1;
        i = skipSpace(text, this.string(i));
        if (i < 0 || unitAt(text, i) !== 0x3a) return -1;
        i = this.value(i + 1, depth);
        if (i < 0) return -1;
        i = skipSpace(text, i);
        const c = text.charCodeAt(i);
        if (c === 0x7d) break;
        if (c !== 0x2c) return -1;
        i = skipSpace(text, i + 1);
      }
    }
    this.ends.set(start, i + 1);
    return i + 1;
  }

  private array(start: number, depth: number): number {
    const { text } = this;
    let i = skipSpace(text, start + 1);
    if (unitAt(text, i) !== 0x5d) {
      for (;;) {
        i = this.value(i, depth);
        if (i < 0) return -1;
        i = skipSpace(text, i);
        const c = text.charCodeAt(i);
        if (c === 0x5d) break;
        if (c !== 0x2c) return -1;
        i = skipSpace(text, i + 1);
      }
    }
    this.ends.set(start, i + 1);
    return i + 1;
  }
}

/**
 * The value of a JSON text whose characters are all U+0020 or above (see {@link ScannedJson}):
 * scalars as `JSON.parse` gives them, an array or object as a {@link JsonContainer};
 * `undefined` when `JSON.parse` would refuse the text or it nests deeper than {@link MAX_JSON_DEPTH}.
 */
export function scanJson(text: string): { value: unknown } | undefined {
  const body = new ScannedJson(text);
  return body.check() ? { value: body.decode(body.rootStart) } : undefined;
}

/**
 * True when a byte below 0x20 is in `bytes` (a control character: JSON allows only tab, newline
 * and carriage return, as whitespace outside strings). Four bytes a step: a byte below 0x20 makes
 * `x - 0x20202020` borrow into its top bit, and the lowest such byte always does (`hasless` of
 * the Bit Twiddling Hacks; every byte here is ASCII, so `~x` keeps each top bit).
 */
export function hasControlBytes(bytes: Uint8Array): boolean {
  const n = bytes.length;
  let i = 0;
  while (i < n && ((bytes.byteOffset + i) & 3) !== 0) if (bytes[i++]! < 0x20) return true;
  const words = (n - i) >> 2;
  if (words > 0) {
    const view = new Uint32Array(bytes.buffer, bytes.byteOffset + i, words);
    let found = 0;
    for (let w = 0; w < words; w++) {
      const x = view[w]!;
      found |= (x - 0x20202020) & ~x;
    }
    if ((found & 0x80808080) !== 0) return true;
    i += words * 4;
  }
  for (; i < n; i++) if (bytes[i]! < 0x20) return true;
  return false;
}

/** The UTF-16 unit at `i` (`NaN` past the end). */
const unitAt = (text: string, i: number) => text.charCodeAt(i);

/** JSON's whitespace: space, tab, newline, carriage return (not U+00A0, not a BOM). */
function skipSpace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}
