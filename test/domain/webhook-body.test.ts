import { describe, expect, it } from 'vitest';
import { parseWebhookBody, type MultipartFile } from '../../functions/domain/webhooks/body.js';
import { AppError } from '../../functions/shared/errors.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const BOUNDARY = '----flowgate-boundary-7MA4YWxk';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

/** A multipart body assembled by hand, as a browser or `curl -F` would send it. */
function multipartBody(parts: { name: string; value: string; filename?: string; type?: string }[]): Uint8Array {
  const lines = parts.flatMap((part) => [
    `--${BOUNDARY}`,
    `Content-Disposition: form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`,
    ...(part.type ? [`Content-Type: ${part.type}`] : []),
    '',
    part.value,
  ]);
  return bytes([...lines, `--${BOUNDARY}--`, ''].join('\r\n'));
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('parseWebhookBody', () => {
  it('parseWebhookBody parses a JSON body', async () => {
    expect(await parseWebhookBody(bytes('{"type":"a","n":[1,2]}'), 'application/json')).toEqual({
      kind: 'json',
      value: { type: 'a', n: [1, 2] },
    });
  });

  it('parseWebhookBody accepts parameters and any case in the content type', async () => {
    const body = await parseWebhookBody(bytes('{"a":1}'), 'Application/JSON; charset=UTF-8');
    expect(body).toEqual({ kind: 'json', value: { a: 1 } });
  });

  it('parseWebhookBody parses a form body, repeated names into an array', async () => {
    const body = await parseWebhookBody(bytes('a=1&b=x+y%21&a=2'), 'application/x-www-form-urlencoded; charset=utf-8');
    expect(body).toEqual({ kind: 'form', value: { a: ['1', '2'], b: 'x y!' } });
  });

  it('parseWebhookBody drops __proto__, constructor and prototype form fields', async () => {
    const body = await parseWebhookBody(bytes('__proto__=x&constructor=y&prototype=z&ok=1'), 'application/x-www-form-urlencoded');
    expect(body.value).toEqual({ ok: '1' });
    expect(Object.getPrototypeOf(body.value)).toBe(Object.prototype);
  });

  it('parseWebhookBody keeps a form field named like an Object.prototype member as a string', async () => {
    const body = await parseWebhookBody(bytes('toString=1'), 'application/x-www-form-urlencoded');
    expect(body.value).toEqual({ toString: '1' });
  });

  it('parseWebhookBody parses multipart fields and files', async () => {
    const raw = multipartBody([
      { name: 'type', value: 'upload.created' },
      { name: 'tag', value: 'a' },
      { name: 'tag', value: 'b' },
      { name: 'doc', value: 'hello file', filename: 'note.txt', type: 'text/plain' },
    ]);
    const file: MultipartFile = {
      filename: 'note.txt',
      content_type: 'text/plain',
      size: 10,
      content_base64: Buffer.from('hello file').toString('base64'),
    };
    expect(await parseWebhookBody(raw, MULTIPART)).toEqual({
      kind: 'multipart',
      value: { type: 'upload.created', tag: ['a', 'b'], doc: file },
    });
  });

  it('parseWebhookBody drops a multipart field named __proto__', async () => {
    const body = await parseWebhookBody(multipartBody([{ name: '__proto__', value: 'x' }]), MULTIPART);
    expect(body.value).toEqual({});
    expect(Object.getPrototypeOf(body.value)).toBe(Object.prototype);
  });

  it('parseWebhookBody rejects text/plain with unsupported_media_type', async () => {
    expect((await rejection(parseWebhookBody(bytes('hi'), 'text/plain'))).code).toBe('unsupported_media_type');
  });

  it('parseWebhookBody rejects a missing content type with unsupported_media_type', async () => {
    const error = await rejection(parseWebhookBody(bytes('{}'), undefined));
    expect([error.code, error.status]).toEqual(['unsupported_media_type', 415]);
  });

  it('parseWebhookBody rejects truncated JSON with validation_error', async () => {
    const error = await rejection(parseWebhookBody(bytes('{"a":[1,2'), 'application/json'));
    expect([error.code, error.status]).toEqual(['validation_error', 400]);
  });

  it('parseWebhookBody accepts JSON nested 256 deep', async () => {
    expect((await parseWebhookBody(bytes(nested(256)), 'application/json')).kind).toBe('json');
  });

  it('parseWebhookBody rejects JSON nested 257 deep with validation_error', async () => {
    expect((await rejection(parseWebhookBody(bytes(nested(257)), 'application/json'))).code).toBe('validation_error');
  });

  it('parseWebhookBody rejects JSON nested 10,000 deep with validation_error', async () => {
    expect((await rejection(parseWebhookBody(bytes(nested(10_000)), 'application/json'))).code).toBe('validation_error');
  });

  it('parseWebhookBody rejects invalid UTF-8 JSON with validation_error', async () => {
    const raw = Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]); // {"a":"\xc3("}
    expect((await rejection(parseWebhookBody(raw, 'application/json'))).code).toBe('validation_error');
  });

  it('parseWebhookBody rejects an invalid UTF-8 form body with validation_error', async () => {
    const raw = Uint8Array.from([0x61, 0x3d, 0xff]); // a=\xff
    expect((await rejection(parseWebhookBody(raw, 'application/x-www-form-urlencoded'))).code).toBe('validation_error');
  });

  it('parseWebhookBody rejects multipart without a boundary with validation_error', async () => {
    const raw = multipartBody([{ name: 'a', value: '1' }]);
    expect((await rejection(parseWebhookBody(raw, 'multipart/form-data'))).code).toBe('validation_error');
  });

  it('parseWebhookBody rejects truncated multipart with validation_error', async () => {
    const raw = multipartBody([{ name: 'doc', value: 'x'.repeat(100), filename: 'a.bin' }]);
    expect((await rejection(parseWebhookBody(raw.slice(0, raw.length - 40), MULTIPART))).code).toBe('validation_error');
  });

  it('parseWebhookBody rejects a multipart part with a malformed header with validation_error', async () => {
    const raw = bytes(`--${BOUNDARY}\r\nnot a header\r\n\r\nx\r\n--${BOUNDARY}--\r\n`);
    expect((await rejection(parseWebhookBody(raw, MULTIPART))).code).toBe('validation_error');
  });

  it('parseWebhookBody rejects a multipart body without any boundary line with validation_error', async () => {
    expect((await rejection(parseWebhookBody(bytes('just text'), MULTIPART))).code).toBe('validation_error');
  });
});
