// A JSON body read by path without building it: what the HMAC primitive needs of a body is a few
// scalars (Linear's `webhookTimestamp`, Adyen's eight fields of each item), and building the whole
// value cost more than the HMAC itself (`JSON.parse` of a 100 KB body, 55 µs, beside its HMAC's 55 µs).
import { jsonStringEnd as stringEnd, MAX_JSON_DEPTH } from '../../../../shared/json.js';

/** Array indexes a path may name: as `JSON.parse`'s arrays are read by `valueAt` in hmac.ts. */
export const ARRAY_INDEX = /^(?:0|[1-9]\d{0,8})$/;
const QUOTE = 0x22;

/**
 * An array or object of a scanned body, read member by member ({@link JsonContainer.get}); its
 * scalars come out as `JSON.parse` would give them, containers as further `JsonContainer`s.
 */
export class JsonContainer {
  /**
   * Read on the first `get`: an array's elements (where each starts), or an object's members as
   * triples (where its name's quote opens, where it closes, where its value starts). Names are
   * compared where they are, never copied: a lookup costs a few comparisons, not a Map of strings.
   */
  private index: number[] | undefined;

  constructor(
    private readonly body: ScannedJson,
    readonly start: number,
    readonly isArray: boolean,
  ) {}

  /** The member named `segment` (the last of repeated names, as `JSON.parse` keeps), or the element it indexes; `undefined` when none. */
  get(segment: string): unknown {
    if (this.isArray) {
      if (!ARRAY_INDEX.test(segment)) return undefined;
      const at = this.elements()[Number(segment)];
      return at === undefined ? undefined : this.body.decode(at);
    }
    const members = (this.index ??= this.body.members(this.start));
    let at = -1;
    // Every member is looked at: a repeated name keeps its last value, as JSON.parse does.
    for (let m = 0; m < members.length; m += 3) {
      if (this.body.nameIs(members[m]!, members[m + 1]!, segment)) at = members[m + 2]!;
    }
    return at === -1 ? undefined : this.body.decode(at);
  }

  /** The elements of an array (`undefined` for an object). */
  items(): unknown[] | undefined {
    return this.isArray ? this.elements().map((at) => this.body.decode(at)) : undefined;
  }

  private elements(): number[] {
    return (this.index ??= this.body.elements(this.start));
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
  private escaped: Set<number> | undefined;
  /** Containers read so far, by where they start: each is indexed once, however often a path passes it. */
  private readonly containers = new Map<number, JsonContainer>();
  /** The next backslash at or after the scan's position (`text.length` when none). */
  private nextBackslash = -1;
  rootStart = 0;
  /** The root object's members, as {@link ScannedJson.members} gives them, noted during the check. */
  private readonly rootMembers: number[] = [];

  constructor(readonly text: string) {}

  /** The value starting at `at` (no whitespace), as `JSON.parse` gives it; containers as {@link JsonContainer}. */
  decode(at: number): unknown {
    const { text } = this;
    const c = text.charCodeAt(at);
    switch (c) {
      case QUOTE: {
        const end = stringEnd(text, at);
        return this.escaped?.has(at) ? JSON.parse(text.slice(at, end)) : text.slice(at + 1, end - 1);
      }
      case 0x7b:
      case 0x5b: {
        let container = this.containers.get(at);
        if (!container) this.containers.set(at, (container = new JsonContainer(this, at, c === 0x5b)));
        return container;
      }
      case 0x74:
        return true;
      case 0x66:
        return false;
      case 0x6e:
        return null;
      default:
        return Number(text.slice(at, this.valueEnd(at)));
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
    // A checked number: its characters run to the first that cannot be in one.
    let end = at + 1;
    for (let d = text.charCodeAt(end); (d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d; d = text.charCodeAt(end)) end++;
    return end;
  }

  /** True when the name whose quotes are at `open` and `close` is `name` (escaped names decoded first). */
  nameIs(open: number, close: number, name: string): boolean {
    if (this.escaped?.has(open)) return JSON.parse(this.text.slice(open, close + 1)) === name;
    return close - open - 1 === name.length && this.text.startsWith(name, open + 1);
  }

  /** An object's members, as triples: where the name's opening and closing quotes are, and where the value starts. */
  members(start: number): number[] {
    if (start === this.rootStart && unitAt(this.text, start) === 0x7b) return this.rootMembers;
    const members: number[] = [];
    const { text } = this;
    let i = skipSpace(text, start + 1);
    for (let c = text.charCodeAt(i); c === QUOTE; c = text.charCodeAt(i)) {
      const nameEnd = stringEnd(text, i);
      const value = skipSpace(text, skipSpace(text, nameEnd) + 1);
      members.push(i, nameEnd - 1, value);
      i = skipSpace(text, this.valueEnd(value));
      if (unitAt(text, i) !== 0x2c) break;
      i = skipSpace(text, i + 1);
    }
    return members;
  }

  /** Where an array's elements start, in order. */
  elements(start: number): number[] {
    const elements: number[] = [];
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
        return numberEnd(text, i);
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
      (this.escaped ??= new Set()).add(start);
    }
    return end;
  }

  private object(start: number, depth: number): number {
    const { text } = this;
    let i = skipSpace(text, start + 1);
    if (unitAt(text, i) !== 0x7d) {
      for (;;) {
        if (unitAt(text, i) !== QUOTE) return -1;
        const nameStart = i;
        const nameEnd = this.string(i) - 1;
        i = skipSpace(text, nameEnd + 1);
        if (i < 0 || unitAt(text, i) !== 0x3a) return -1;
        const value = skipSpace(text, i + 1);
        // The body's own members are where lookups start (Linear's timestamp): kept as the check passes them.
        if (depth === 1) this.rootMembers.push(nameStart, nameEnd, value);
        i = this.value(value, depth);
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
 * and carriage return, as whitespace outside strings). For ASCII bytes only (`isAscii` first).
 * Four bytes a step: adding 0x60 to an ASCII byte sets its top bit exactly when the byte is 0x20
 * or above, and never carries into the next byte (0x7f + 0x60 = 0xdf). Four words a loop turn:
 * 14 µs of CPU for 100 KB, where one word a turn took 25.
 */
export function hasControlBytes(bytes: Uint8Array): boolean {
  const n = bytes.length;
  let i = 0;
  while (i < n && ((bytes.byteOffset + i) & 3) !== 0) if (bytes[i++]! < 0x20) return true;
  const words = (n - i) >> 2;
  if (words > 0) {
    const view = new Int32Array(bytes.buffer, bytes.byteOffset + i, words);
    const whole = words & ~3;
    let a = -1;
    let b = -1;
    let c = -1;
    let d = -1;
    let w = 0;
    for (; w < whole; w += 4) {
      a &= (view[w]! + 0x60606060) | 0;
      b &= (view[w + 1]! + 0x60606060) | 0;
      c &= (view[w + 2]! + 0x60606060) | 0;
      d &= (view[w + 3]! + 0x60606060) | 0;
    }
    for (; w < words; w++) a &= (view[w]! + 0x60606060) | 0;
    if ((a & b & c & d & 0x80808080) !== (0x80808080 | 0)) return true;
  }
  for (i += words * 4; i < n; i++) if (bytes[i]! < 0x20) return true;
  return false;
}

/**
 * The index after the number starting at `i`, or -1 when none does: RFC 8259's
 * `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, what `JSON.parse` accepts (`Number()` then
 * reads it to the same value). By hand: a sticky RegExp cost more than the rest of a small body's scan.
 */
function numberEnd(text: string, i: number): number {
  let c = text.charCodeAt(i);
  if (c === 0x2d) c = text.charCodeAt(++i);
  if (c === 0x30) c = text.charCodeAt(++i);
  else if (c >= 0x31 && c <= 0x39) i = digitsEnd(text, i);
  else return -1;
  c = text.charCodeAt(i);
  if (c === 0x2e) {
    if (!isDigit(text.charCodeAt(i + 1))) return -1;
    i = digitsEnd(text, i + 1);
    c = text.charCodeAt(i);
  }
  if (c === 0x65 || c === 0x45) {
    c = text.charCodeAt(++i);
    if (c === 0x2b || c === 0x2d) c = text.charCodeAt(++i);
    if (!isDigit(c)) return -1;
    i = digitsEnd(text, i);
  }
  return i;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

function digitsEnd(text: string, i: number): number {
  while (isDigit(text.charCodeAt(i))) i++;
  return i;
}

/** The UTF-16 unit at `i` (`NaN` past the end). */
const unitAt = (text: string, i: number) => text.charCodeAt(i);

/** JSON's whitespace: space, tab, newline, carriage return (not U+00A0, not a BOM). */
function skipSpace(text: string, i: number): number {
  let c = text.charCodeAt(i);
  while (c <= 0x20 && (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) c = text.charCodeAt(++i);
  return i;
}
