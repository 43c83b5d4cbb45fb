import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SENDERS } from '../../../../functions/domain/webhooks/senders/catalog.js';
import type { HmacParams } from '../../../../functions/domain/webhooks/senders/catalog-types.js';
import { keyBytes, parseTimestamp, verifyHmac, type HmacInput } from '../../../../functions/domain/webhooks/senders/primitives/hmac.js';
import { validateHmacParams } from '../../../../functions/domain/webhooks/senders/primitives/hmac-params.js';

/*
 * The HMAC primitive against every shape of input, once; the rows built on it are proven one by
 * one in test/domain/senders/.
 */
const NOW = 1_700_000_000;
const BODY = '{"data":{"id":"obj_1","items":[{"n":1},{"n":2}]},"ok":true}';

function input(headers: Record<string, string>, options: { body?: string | Buffer; secrets?: string[]; method?: string; url?: string; now?: number } = {}): HmacInput {
  return {
    request: { rawBody: Buffer.from(options.body ?? BODY), headers, url: options.url ?? 'https://hooks.example.com/w', nowSeconds: options.now ?? NOW },
    secrets: options.secrets ?? ['secret'],
    method: options.method ?? 'POST',
  };
}

const hexMac = (key: string | Buffer, content: string, algorithm = 'sha256') => createHmac(algorithm, key).update(content).digest('hex');

const BODY_HEX: HmacParams = { algorithm: 'sha256', key: { format: 'text' }, content: [{ part: 'body' }], signature: { from: 'header', name: 'x-sig' }, encoding: 'hex' };

describe('verifyHmac signature sources', () => {
  it('verifyHmac returns true for a prefixed header and false when the prefix is missing', () => {
    const params: HmacParams = { ...BODY_HEX, signature: { from: 'header', name: 'x-sig', prefix: 'sha256=' } };
    expect(verifyHmac(params, input({ 'x-sig': `sha256=${hexMac('secret', BODY)}` }))).toBe(true);
    expect(verifyHmac(params, input({ 'x-sig': hexMac('secret', BODY) }))).toBe(false);
  });

  it('verifyHmac returns false for an uppercase-only mismatch of a prefix (prefixes are exact)', () => {
    const params: HmacParams = { ...BODY_HEX, signature: { from: 'header', name: 'x-sig', prefix: 'sha256=' } };
    expect(verifyHmac(params, input({ 'x-sig': `SHA256=${hexMac('secret', BODY)}` }))).toBe(false);
  });

  it('verifyHmac accepts any matching item of a list and skips malformed ones', () => {
    const params: HmacParams = { ...BODY_HEX, signature: { from: 'header', name: 'x-sig', list: { separator: ',', assign: '=', key: 'v1' } } };
    expect(verifyHmac(params, input({ 'x-sig': `v1=zz,v0=${hexMac('secret', BODY)},junk, v1 = ${hexMac('secret', BODY)} ` }))).toBe(true);
    expect(verifyHmac(params, input({ 'x-sig': `v0=${hexMac('secret', BODY)}` }))).toBe(false);
  });

  it('verifyHmac refuses a timestamp given twice in the signature list', () => {
    const params: HmacParams = {
      ...BODY_HEX,
      content: [{ part: 'timestamp' }, { part: 'literal', text: '.' }, { part: 'body' }],
      signature: { from: 'header', name: 'x-sig', list: { separator: ',', assign: '=', key: 'v1' } },
      timestamp: { source: { from: 'signature_list', key: 't' }, format: 'unix_seconds', tolerance_seconds: 300 },
    };
    const v1 = hexMac('secret', `${NOW}.${BODY}`);
    expect(verifyHmac(params, input({ 'x-sig': `t=${NOW},v1=${v1}` }))).toBe(true);
    expect(verifyHmac(params, input({ 'x-sig': `t=${NOW},t=${NOW},v1=${v1}` }))).toBe(false);
  });

  it('verifyHmac reads a signature from a JSON field and from a form field', () => {
    const json: HmacParams = { ...BODY_HEX, content: [{ part: 'json', path: ['data', 'id'] }], signature: { from: 'json', path: ['sig'] } };
    expect(verifyHmac(json, input({}, { body: JSON.stringify({ data: { id: 'obj_1' }, sig: hexMac('secret', 'obj_1') }) }))).toBe(true);
    const form: HmacParams = { ...BODY_HEX, content: [{ part: 'form', name: 'payload' }], signature: { from: 'form', name: 'sig' } };
    expect(verifyHmac(form, input({}, { body: `payload=a+b%26c&sig=${hexMac('secret', 'a b&c')}` }))).toBe(true);
  });

  it('verifyHmac refuses a form field given twice (ambiguous)', () => {
    const form: HmacParams = { ...BODY_HEX, content: [{ part: 'form', name: 'payload' }], signature: { from: 'form', name: 'sig' } };
    expect(verifyHmac(form, input({}, { body: `payload=a&payload=b&sig=${hexMac('secret', 'a')}` }))).toBe(false);
  });

  it('verifyHmac reads numbered headers in any order', () => {
    const params: HmacParams = { ...BODY_HEX, signature: { from: 'numbered_headers', name_prefix: 'x-sig-' } };
    expect(verifyHmac(params, input({ 'x-sig-3': hexMac('secret', BODY), 'x-sig-1': 'ab' }))).toBe(true);
    expect(verifyHmac(params, input({ 'x-sig-0': hexMac('secret', BODY) }))).toBe(false);
  });
});

describe('verifyHmac content parts', () => {
  it('verifyHmac signs the method, the URL, a header and a JSON array element as given', () => {
    const params: HmacParams = {
      ...BODY_HEX,
      content: [{ part: 'method' }, { part: 'url' }, { part: 'header', name: 'x-id' }, { part: 'json', path: ['data', 'items', '1', 'n'] }, { part: 'json', path: ['ok'] }],
    };
    const signature = hexMac('secret', 'PATCHhttps://hooks.example.com/w?a=1id_12true');
    expect(verifyHmac(params, input({ 'x-id': 'id_1', 'x-sig': signature }, { method: 'PATCH', url: 'https://hooks.example.com/w?a=1' }))).toBe(true);
    expect(verifyHmac(params, input({ 'x-id': 'id_1', 'x-sig': signature }, { method: 'POST', url: 'https://hooks.example.com/w?a=1' }))).toBe(false);
  });

  it('verifyHmac refuses a missing JSON field unless optional, which signs as empty text', () => {
    const required: HmacParams = { ...BODY_HEX, content: [{ part: 'json', path: ['absent'] }, { part: 'body' }] };
    const optional: HmacParams = { ...BODY_HEX, content: [{ part: 'json', path: ['absent'], optional: true }, { part: 'body' }] };
    expect(verifyHmac(required, input({ 'x-sig': hexMac('secret', BODY) }))).toBe(false);
    expect(verifyHmac(optional, input({ 'x-sig': hexMac('secret', BODY) }))).toBe(true);
  });

  it('verifyHmac reads a field holding a genuine U+FFFD, and refuses the invalid bytes a decoder would replace by one', () => {
    const params: HmacParams = { ...BODY_HEX, content: [{ part: 'json', path: ['a'] }] };
    const signature = hexMac('secret', 'x\uFFFDy');
    expect(verifyHmac(params, input({ 'x-sig': signature }, { body: '{"a":"x\uFFFDy"}' }))).toBe(true);
    const invalid = Buffer.concat([Buffer.from('{"a":"x'), Buffer.from([0xff]), Buffer.from('y"}')]);
    expect(verifyHmac(params, input({ 'x-sig': signature }, { body: invalid }))).toBe(false);
  });

  it('verifyHmac does not read inherited properties or non-integer values from JSON', () => {
    const proto: HmacParams = { ...BODY_HEX, content: [{ part: 'json', path: ['constructor', 'name'] }] };
    expect(verifyHmac(proto, input({ 'x-sig': hexMac('secret', 'Object') }))).toBe(false);
    const float: HmacParams = { ...BODY_HEX, content: [{ part: 'json', path: ['n'] }] };
    expect(verifyHmac(float, input({ 'x-sig': hexMac('secret', '1.5') }, { body: '{"n":1.5}' }))).toBe(false);
  });

  it('verifyHmac returns false for a body that is not JSON, not UTF-8, or deeply nested without the field, when a part needs JSON', () => {
    const params: HmacParams = { ...BODY_HEX, content: [{ part: 'json', path: ['a'] }] };
    const signature = hexMac('secret', 'x');
    expect(verifyHmac(params, input({ 'x-sig': signature }, { body: 'a=x' }))).toBe(false);
    expect(verifyHmac(params, input({ 'x-sig': signature }, { body: Buffer.from([0x7b, 0xff, 0x7d]) }))).toBe(false);
    expect(verifyHmac(params, input({ 'x-sig': signature }, { body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` }))).toBe(false);
  });
});

describe('verifyHmac keys', () => {
  it('keyBytes decodes hex and base64 strictly, strips a prefix, and hashes for sha1_of_text', () => {
    expect(keyBytes({ format: 'hex' }, 'a1b2')).toEqual(Buffer.from([0xa1, 0xb2]));
    expect(keyBytes({ format: 'hex' }, 'a1b')).toBeUndefined();
    expect(keyBytes({ format: 'base64', strip_prefix: 'whsec_' }, 'whsec_AQID')).toEqual(Buffer.from([1, 2, 3]));
    expect(keyBytes({ format: 'base64' }, 'not base64!')).toBeUndefined();
    expect(keyBytes({ format: 'sha1_of_text' }, 'k')).toEqual(createHash('sha1').update('k').digest());
    expect(keyBytes({ format: 'text', strip_prefix: 'p_' }, 'p_')).toBeUndefined();
  });

  it('verifyHmac skips a secret that gives no key and still tries the next one', () => {
    const params: HmacParams = { ...BODY_HEX, key: { format: 'hex' } };
    const signature = createHmac('sha256', Buffer.from('a1b2', 'hex')).update(BODY).digest('hex');
    expect(verifyHmac(params, input({ 'x-sig': signature }, { secrets: ['zz', 'a1b2'] }))).toBe(true);
    expect(verifyHmac(params, input({ 'x-sig': signature }, { secrets: ['zz'] }))).toBe(false);
  });
});

describe('parseTimestamp', () => {
  it('reads unix seconds and milliseconds and RFC 3339, refusing signs, decimals and junk', () => {
    expect(parseTimestamp('1700000000', 'unix_seconds')).toBe(NOW);
    expect(parseTimestamp('1700000000500', 'unix_milliseconds')).toBe(NOW + 0.5);
    expect(parseTimestamp('2023-11-14T22:13:20.123456789Z', 'rfc3339')).toBeCloseTo(NOW + 0.123, 3);
    expect(parseTimestamp('2023-11-14T23:13:20+01:00', 'rfc3339')).toBe(NOW);
    for (const bad of ['-1700000000', '1700000000.5', '1e9', ' 1700000000', '']) expect(parseTimestamp(bad, 'unix_seconds')).toBeUndefined();
    for (const bad of ['2023-11-14', '2023-13-14T22:13:20Z', '2023-11-14T22:13:20', 'yesterday']) expect(parseTimestamp(bad, 'rfc3339')).toBeUndefined();
  });
});

describe('verifyHmac items', () => {
  const params: HmacParams = {
    ...BODY_HEX,
    items: { path: ['items'] },
    content: [{ part: 'json', path: ['id'] }],
    signature: { from: 'json', path: ['sig'] },
  };
  const signed = (id: string, key = 'secret') => ({ id, sig: hexMac(key, id) });

  it('verifyHmac returns true only when every item verifies', () => {
    expect(verifyHmac(params, input({}, { body: JSON.stringify({ items: [signed('a'), signed('b')] }) }))).toBe(true);
    expect(verifyHmac(params, input({}, { body: JSON.stringify({ items: [signed('a'), signed('b', 'other')] }) }))).toBe(false);
    expect(verifyHmac(params, input({}, { body: JSON.stringify({ items: [signed('a'), { id: 'b' }] }) }))).toBe(false);
  });

  it('verifyHmac returns false when the items are absent, empty or not an array', () => {
    for (const body of ['{}', '{"items":[]}', '{"items":{"0":{}}}']) expect(verifyHmac(params, input({}, { body }))).toBe(false);
  });
});

describe('verifyHmac never throws on request content', () => {
  const hmacRows = SENDERS.flatMap((row) => (row.verification.primitive === 'hmac' ? [{ id: row.id, params: row.verification }] : []));
  /** Header names the rows read, so random values land where a verifier looks. */
  const knownHeaders = [...new Set(hmacRows.flatMap(({ params }) => JSON.stringify(params).match(/"name":"[^"]+"/g) ?? []).map((m) => m.slice(8, -1)))];
  const headerName = fc.oneof(fc.constantFrom(...knownHeaders, 'x-docusign-signature-1', 'content-type'), fc.string({ maxLength: 20 }));
  const headerValue = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.constantFrom('t=1700000000,v1=00', 'v1,AAAA v1,', 'ts=;h1=', 'sha256=', 'v0=zz', '2023-11-14T22:13:20Z', '1700000000000', 'a|b&c|d', 'application/x-www-form-urlencoded'),
  );
  const body = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.json({ maxDepth: 4 }).map((text) => Buffer.from(text)),
    fc.constantFrom('{"signature":{"timestamp":1,"token":null,"signature":{}}}', '{"notificationItems":[null,{"NotificationRequestItem":[]}]}', 'bt_signature=%&bt_payload=%ZZ', '{"webhookTimestamp":1e400}').map((text) => Buffer.from(text)),
  );
  const secrets = fc.array(fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom('whsec_', 'whsec_!!', 'zz', 'a1b')), { minLength: 1, maxLength: 3 });

  it('verifyHmac returns a boolean for random headers, bodies, URLs and secrets, for every HMAC row', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...hmacRows),
        fc.dictionary(headerName, headerValue, { maxKeys: 8 }),
        body,
        secrets,
        fc.oneof(fc.webUrl({ withQueryParameters: true }), fc.string({ maxLength: 40 })),
        fc.constantFrom('POST', 'GET', ''),
        ({ params }, headers, rawBody, keys, url, method) => {
          const result = verifyHmac(params, { request: { rawBody, headers, url, nowSeconds: NOW }, secrets: keys, method });
          expect(typeof result).toBe('boolean');
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('validateHmacParams', () => {
  it('validateHmacParams accepts every HMAC row of the catalog and lower-cases header names', () => {
    const check = validateHmacParams({ ...BODY_HEX, signature: { from: 'header', name: 'X-Sig' } });
    expect(check.ok && check.params.signature).toEqual({ from: 'header', name: 'x-sig' });
  });

  it.each([
    [{ ...BODY_HEX, algorithm: 'md5' }, 'algorithm'],
    [{ ...BODY_HEX, key: { format: 'pem' } }, 'key.format'],
    [{ ...BODY_HEX, content: [{ part: 'body' }, { part: 'cookie' }] }, 'content.1.part'],
    [{ ...BODY_HEX, content: [{ part: 'literal', text: 'only' }] }, 'content'],
    [{ ...BODY_HEX, content: [{ part: 'timestamp' }] }, 'content.0'],
    [{ ...BODY_HEX, signature: { from: 'header', name: 'bad name' } }, 'signature.name'],
    [{ ...BODY_HEX, signature: { from: 'header', name: 'x', list: { separator: '|', assign: '=' } } }, 'signature.list.separator'],
    [{ ...BODY_HEX, signature: { from: 'header', name: 'x', list: { separator: ',', assign: ',' } } }, 'signature.list.assign'],
    [{ ...BODY_HEX, timestamp: { source: { from: 'header', name: 't' }, format: 'unix_seconds', tolerance_seconds: 0 } }, 'timestamp.tolerance_seconds'],
    [{ ...BODY_HEX, timestamp: { source: { from: 'signature_list', key: 't' }, format: 'unix_seconds', tolerance_seconds: 60 } }, 'timestamp.source'],
    [{ ...BODY_HEX, items: { path: ['items'] } }, 'signature.from'],
    [{ ...BODY_HEX, surprise: true }, 'surprise'],
    [{ ...BODY_HEX, encoding: undefined }, 'encoding'],
  ])('validateHmacParams names the bad field (%#: %s)', (value, field) => {
    const check = validateHmacParams(value);
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.field).toBe(field);
      expect(check.message.startsWith(`${field}: `)).toBe(true);
    }
  });
});
