/**
 * The HMAC primitive reads a compact ASCII JSON body by path without building it (json-scan.ts).
 * The shortcut must agree with `JSON.parse` (within the depth limit, as `parseJsonWithinDepth`)
 * on every text: the same texts refused, the same value at every path, whatever a hostile body
 * hides in its strings or nested objects.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { hasControlBytes, JsonContainer, scanJson } from '../../../../functions/domain/webhooks/senders/primitives/json-scan.js';
import { verifySender } from '../../../../functions/domain/webhooks/senders/verify.js';
import { jsonNestingDepth, MAX_JSON_DEPTH, nestsWithin, parseJsonWithinDepth } from '../../../../functions/shared/json.js';
import { rowOf } from '../../../support/sender-proof.js';
import { contextFor } from '../../../support/verify-context.js';

/** What `parseJsonWithinDepth` makes of `text`, as `{ value }`, or `undefined` when it refuses it. */
function reference(text: string): { value: unknown } | undefined {
  if (jsonNestingDepth(text) > MAX_JSON_DEPTH) return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** Every path of a parsed value down to its scalars (object names and array indexes), with the value there. */
function* pathsOf(value: unknown, path: string[] = []): Generator<[string[], unknown]> {
  yield [path, value];
  if (Array.isArray(value)) for (const [i, item] of value.entries()) yield* pathsOf(item, [...path, String(i)]);
  else if (typeof value === 'object' && value !== null) for (const [name, item] of Object.entries(value)) yield* pathsOf(item, [...path, name]);
}

/** The scanned value at `path`, read through `JsonContainer#get` alone. */
function scannedAt(root: unknown, path: string[]): unknown {
  let value = root;
  for (const segment of path) value = value instanceof JsonContainer ? value.get(segment) : undefined;
  return value;
}

/** Asserts the scan of `text` agrees with `JSON.parse`: refused alike, and the same value at every path and a few absent ones. */
function expectAgreement(text: string): void {
  const scanned = scanJson(text);
  const parsed = reference(text);
  expect(scanned === undefined, `scanJson and JSON.parse disagree on whether ${JSON.stringify(text.slice(0, 200))} is JSON`).toBe(parsed === undefined);
  if (!scanned || !parsed) return;
  for (const [path, value] of pathsOf(parsed.value)) {
    const at = scannedAt(scanned.value, path);
    if (typeof value === 'object' && value !== null) {
      expect(at).toBeInstanceOf(JsonContainer);
      expect((at as JsonContainer).isArray).toBe(Array.isArray(value));
      expect((at as JsonContainer).toValue()).toEqual(value);
      if (Array.isArray(value)) expect((at as JsonContainer).items()).toHaveLength(value.length);
      // Names a parse would not have (inherited, array properties, an index past the end) read as nothing.
      for (const name of ['__proto__', 'constructor', 'length', '-1', '01', Array.isArray(value) ? String(value.length) : 'absent']) {
        if (Array.isArray(value) || !Object.hasOwn(value, name)) expect((at as JsonContainer).get(name)).toBeUndefined();
      }
    } else {
      expect(Object.is(at, value), `at ${JSON.stringify(path)}: ${String(at)} vs ${String(value)}`).toBe(true);
    }
  }
}

const noControl = (text: string) => !/[\u0000-\u001f]/.test(text);
/** Characters that matter to JSON's grammar, and a few that look as if they might. */
const jsonish = fc.constantFrom(...'{}[]":,\\/0123456789-+.eEtrufalsn bx', '\\u', '\\"', '\\\\', 'é', '\u2028', '\u00a0', '\ufeff', '\ud800', 'webhookTimestamp');

describe('scanJson agrees with JSON.parse', () => {
  it('on any JSON value, compact', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => expectAgreement(JSON.stringify(value))), { numRuns: 1000 });
  });

  it('on any JSON text without control characters (fast-check json, spaced with blanks)', () => {
    fc.assert(fc.property(fc.json({ maxDepth: 5 }), fc.nat(3), (text, blanks) => {
      expectAgreement(text.replace(/([,:[\]{}])/g, (c) => (c === '"' ? c : `${' '.repeat(blanks)}${c}${' '.repeat(blanks)}`)));
    }), { numRuns: 500 });
  });

  it('on texts one to three edits away from JSON (mostly not JSON): refused alike, or read alike', () => {
    const edit = fc.tuple(fc.nat(), fc.constantFrom('insert', 'delete', 'replace'), jsonish);
    fc.assert(fc.property(fc.json({ maxDepth: 4 }), fc.array(edit, { minLength: 1, maxLength: 3 }), (json, edits) => {
      let text = json;
      for (const [at, how, piece] of edits) {
        const i = text.length === 0 ? 0 : at % text.length;
        text = how === 'insert' ? text.slice(0, i) + piece + text.slice(i) : how === 'delete' ? text.slice(0, i) + text.slice(i + 1) : text.slice(0, i) + piece + text.slice(i + 1);
      }
      fc.pre(noControl(text));
      expectAgreement(text);
    }), { numRuns: 3000 });
  });

  it('on any short string of JSON characters', () => {
    fc.assert(fc.property(fc.array(jsonish, { maxLength: 24 }).map((pieces) => pieces.join('')), (text) => expectAgreement(text)), { numRuns: 3000 });
  });

  it.each([
    ['the key inside a string value', '{"data":{"note":"\\",\\"webhookTimestamp\\":1"},"webhookTimestamp":5}'],
    ['the key only in a nested object', '{"data":{"webhookTimestamp":1}}'],
    ['the key as a value', '{"a":"webhookTimestamp","b":["webhookTimestamp",{"webhookTimestamp":2}]}'],
    ['a repeated key (the last one counts)', '{"webhookTimestamp":1,"webhookTimestamp":2}'],
    ['the key spelled with escapes', '{"webhook\\u0054imestamp":3,"webhookTimestamp\\u0000":4}'],
    ['escaped quotes and backslash runs before a closing quote', '{"a":"\\\\","b":"\\\\\\"","c":"x\\\\\\\\","webhookTimestamp":6}'],
    ['a key named __proto__', '{"__proto__":{"webhookTimestamp":1},"constructor":2}'],
    ['trailing text after the object', '{"webhookTimestamp":1} x'],
    ['a second value after the object', '{"webhookTimestamp":1}{"webhookTimestamp":2}'],
    ['an unterminated string', '{"webhookTimestamp":1,"a":"'],
    ['an unclosed object', '{"webhookTimestamp":1'],
    ['a trailing comma', '{"webhookTimestamp":1,}'],
    ['an invalid escape', '{"a":"\\x","webhookTimestamp":1}'],
    ['a short \\u escape', '{"a":"\\u12","webhookTimestamp":1}'],
    ['lone surrogates by escape', '{"a":"\\ud800","b":"\\udc00x","webhookTimestamp":1}'],
    ['numbers JSON refuses', '[01,1.,.5,+1,1e,-]'],
    ['numbers JSON reads', '[0,-0,1e3,1E+3,-1.5e-7,12345678901234567890,1.7976931348623157e309]'],
    ['a leading byte-order mark', '\ufeff{"webhookTimestamp":1}'],
    ['a no-break space as whitespace', '{"webhookTimestamp":\u00a01}'],
    ['literals, misspelt', '[true,fals,nul]'],
    ['literals', '{"a":true,"b":false,"c":null,"webhookTimestamp":null}'],
    ['an empty text', ''],
    ['a scalar', '"webhookTimestamp"'],
    ['blanks around everything', '  { "webhookTimestamp" : 7 , "a" : [ 1 , { } , [ ] ] }  '],
  ])('on a hostile or edge-case text: %s', (_what, text) => {
    expectAgreement(text);
  });

  it(`refuses a text nested deeper than ${MAX_JSON_DEPTH} without parsing it, and reads one at the limit`, () => {
    const nested = (depth: number) => `{"webhookTimestamp":1,"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(scanJson(nested(MAX_JSON_DEPTH + 1))).toBeUndefined();
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
    expect((scanJson(nested(MAX_JSON_DEPTH))!.value as JsonContainer).get('webhookTimestamp')).toBe(1);
    expectAgreement(nested(MAX_JSON_DEPTH));
    expectAgreement(nested(MAX_JSON_DEPTH + 1));
  });

  it('reads a 100 KB body whose big string hides the key, and the one at its end', () => {
    const decoy = `\\"webhookTimestamp\\":1,${'x'.repeat(100_000)}`;
    expectAgreement(`{"data":{"description":"${decoy}"},"webhookTimestamp":1795839997729}`);
    expect((scanJson(`{"data":{"description":"${decoy}"},"webhookTimestamp":1795839997729}`)!.value as JsonContainer).get('webhookTimestamp')).toBe(1795839997729);
  });
});

describe('hasControlBytes', () => {
  it('finds a byte below 0x20 wherever it is, at any alignment, and only then', () => {
    const bytes = fc.uint8Array({ maxLength: 100 }).map((array) => array.map((b) => b & 0x7f));
    fc.assert(fc.property(bytes, fc.nat(7), (array, offset) => {
      const backing = new Uint8Array(array.length + offset);
      backing.set(array, offset);
      const view = backing.subarray(offset);
      expect(hasControlBytes(view)).toBe(view.some((b) => b < 0x20));
    }), { numRuns: 2000 });
  });

  it('finds each control byte alone in a long ASCII run, at every position of a word', () => {
    for (let control = 0; control < 0x20; control++) {
      for (let at = 0; at < 9; at++) {
        const bytes = Buffer.alloc(16, 0x20);
        bytes[at] = control;
        expect(hasControlBytes(bytes), `0x${control.toString(16)} at ${at}`).toBe(true);
      }
    }
    expect(hasControlBytes(Buffer.from(' ~'.repeat(40)))).toBe(false);
  });
});

describe('nestsWithin (the verifiers\' depth check)', () => {
  it('answers jsonNestingDepth(text) <= max for any text, by counting brackets or by its own scan', () => {
    const text = fc.array(fc.constantFrom('{', '}', '[', ']', '"', '\\', 'a', ':', ','), { maxLength: 40 }).map((pieces) => pieces.join(''));
    fc.assert(fc.property(text, fc.nat(6), (t, max) => {
      expect(nestsWithin(t, max)).toBe(jsonNestingDepth(t) <= max);
    }), { numRuns: 5000 });
  });

  it(`refuses a 100 KB text nested ${MAX_JSON_DEPTH + 1} deep behind long strings, and passes one at the limit`, () => {
    const padded = (depth: number) => `${'["x\\\\\\"y",'.repeat(depth)}"${'z'.repeat(100_000)}"${']'.repeat(depth)}`;
    expect(jsonNestingDepth(padded(MAX_JSON_DEPTH + 1))).toBe(MAX_JSON_DEPTH + 1);
    expect(nestsWithin(padded(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsWithin(padded(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(true);
  });
});

describe('the HMAC primitive reads scanned and parsed bodies alike', () => {
  const SECRET = 'lin_wh_scan';
  const NOW = 1_795_839_997;
  const signed = (body: string) => ({ body, headers: { 'linear-signature': createHmac('sha256', SECRET).update(body).digest('hex') }, secrets: [SECRET], nowSeconds: NOW });
  const verifies = (body: string) => verifySender(rowOf('linear'), contextFor(signed(body)));

  it.each([
    ['compact (scanned)', `{"type":"Issue","webhookTimestamp":${NOW * 1000}}`, true],
    ['pretty-printed (parsed: it has newlines)', `{\n  "type": "Issue",\n  "webhookTimestamp": ${NOW * 1000}\n}`, true],
    ['with non-ASCII text (parsed)', `{"title":"Café ☕","webhookTimestamp":${NOW * 1000}}`, true],
    ['a fresh timestamp only inside a string', `{"note":"\\"webhookTimestamp\\":${NOW * 1000}","webhookTimestamp":1}`, false],
    ['a fresh timestamp only in a nested object', `{"data":{"webhookTimestamp":${NOW * 1000}}}`, false],
    ['a stale timestamp after a fresh one (the last counts)', `{"webhookTimestamp":${NOW * 1000},"webhookTimestamp":1}`, false],
    ['a fresh timestamp after a stale one', `{"webhookTimestamp":1,"webhookTimestamp":${NOW * 1000}}`, true],
    ['signed, but not JSON after the timestamp', `{"webhookTimestamp":${NOW * 1000},"a":}`, false],
    ['signed, with a raw tab inside a string', `{"a":"\t","webhookTimestamp":${NOW * 1000}}`, false],
    ['the timestamp as a string', `{"webhookTimestamp":"${NOW * 1000}"}`, true],
    ['the timestamp as a fraction', `{"webhookTimestamp":${NOW * 1000}.5}`, false],
  ])('linear: %s', async (_what, body, expected) => {
    expect(await verifies(body)).toBe(expected);
    expect(parseJsonWithinDepth(body) !== undefined || !expected).toBe(true);
  });
});

describe('the HMAC primitive reads a scanned body of signed items (Adyen, 4 KB and more) as a parsed one', () => {
  const KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
  const OTHER = '11223344D785FBAE710E7F943F307971BB61B21281C98C9129B3D4018A57B2EB';
  /** An item signed as Adyen's HmacValidator signs it, padded in an unsigned field. */
  function item(psp: string, key: string, reason: string, overrides: Record<string, unknown> = {}) {
    const fields = { amount: { currency: 'EUR', value: 1130 }, eventCode: 'AUTHORISATION', merchantAccountCode: 'ScanMerchant', merchantReference: 'order-1', pspReference: psp, success: 'true', ...overrides };
    const signed = `${psp}:${(overrides.originalReference as string) ?? ''}:ScanMerchant:order-1:1130:EUR:${(overrides.eventCode as string) ?? 'AUTHORISATION'}:true`;
    return { NotificationRequestItem: { ...fields, reason, additionalData: { hmacSignature: createHmac('sha256', Buffer.from(key, 'hex')).update(signed).digest('base64') } } };
  }
  const verifies = (items: unknown[], pretty = false) => {
    const body = JSON.stringify({ live: 'false', notificationItems: items }, null, pretty ? 2 : undefined);
    expect(body.length).toBeGreaterThanOrEqual(4096);
    return verifySender(rowOf('adyen'), contextFor({ body, headers: { 'content-type': 'application/json' }, secrets: [KEY] }));
  };
  const pad = 'p'.repeat(5000);

  it.each([false, true])('accepts items all signed by the key (pretty-printed, so parsed: %s)', async (pretty) => {
    expect(await verifies([item('psp_1', KEY, pad), item('psp_2', KEY, '', { originalReference: 'psp_0', eventCode: 'REFUND' })], pretty)).toBe(true);
  });

  it.each([false, true])('refuses an unsigned item beside a signed one (pretty-printed: %s)', async (pretty) => {
    expect(await verifies([item('psp_1', KEY, pad), item('psp_2', OTHER, '')], pretty)).toBe(false);
  });

  it('refuses a signed field changed, and reads a decoy item hidden in a string as text', async () => {
    const changed = item('psp_1', KEY, pad);
    changed.NotificationRequestItem.amount = { currency: 'EUR', value: 1 };
    expect(await verifies([changed])).toBe(false);
    expect(await verifies([item('psp_1', OTHER, `${pad}","notificationItems":[${JSON.stringify(item('psp_1', KEY, ''))}]`)])).toBe(false);
  });
});
