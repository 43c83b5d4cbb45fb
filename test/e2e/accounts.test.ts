import { describe, expect, it } from 'vitest';
import { DEFAULT_MESSAGE } from '../../functions/shared/errors.js';
import { totpCodeAt } from '../support/totp.js';
import { call, useLocalStack } from '../support/local-stack.js';

const stack = useLocalStack();

const START = '/accounts/totp-registration';
const CONFIRM = '/accounts/confirm-totp-registration';
const RECOVERY = '/accounts/recovery-codes/verify';

/** A code no step within two of now produces for `secret`, so it is wrong whenever it arrives. */
function wrongCode(secret: string): string {
  const now = Date.now();
  const near = new Set([-2, -1, 0, 1, 2].map((d) => totpCodeAt(secret, now + d * 30_000)));
  return ['000000', '111111', '222222', '333333', '444444', '555555'].find((code) => !near.has(code))!;
}

async function start(sub: string) {
  const res = await call(stack, 'POST', START, { token: await stack.token(sub) });
  expect(res.status).toBe(200);
  return res.json.data as { secret: string; otpauth_uri: string };
}

describe('TOTP registration over HTTP', () => {
  it('start, confirm with a code from the app, then use a recovery code once', async () => {
    const token = await stack.token('e2e-alice');
    const { secret, otpauth_uri } = await start('e2e-alice');
    expect(otpauth_uri).toBe(`otpauth://totp/Flowgate:e2e-alice?secret=${secret}&issuer=Flowgate&algorithm=SHA1&digits=6&period=30`);

    const confirmed = await call(stack, 'POST', CONFIRM, { token, body: { code: totpCodeAt(secret, Date.now()), secret } });
    expect(confirmed.status).toBe(200);
    const codes: string[] = confirmed.json.data.recovery_codes;
    expect(codes).toHaveLength(10);

    const used = await call(stack, 'POST', RECOVERY, { token, body: { code: codes[0] } });
    expect(used.json).toEqual({ data: { remaining: 9, mfa_token: expect.any(String), expires_at: expect.any(String) } });
    const again = await call(stack, 'POST', RECOVERY, { token, body: { code: codes[0] } });
    expect(again.status).toBe(401);
    expect(again.json).toEqual({ error: 'invalid_code', message: DEFAULT_MESSAGE.invalid_code });
  });

  it('refuses a second confirmation and a new start with 409 already_registered', async () => {
    const token = await stack.token('e2e-bob');
    const { secret } = await start('e2e-bob');
    const body = { code: totpCodeAt(secret, Date.now()), secret };
    expect((await call(stack, 'POST', CONFIRM, { token, body })).status).toBe(200);
    expect((await call(stack, 'POST', CONFIRM, { token, body })).json).toEqual({ error: 'already_registered', message: expect.any(String) });
    expect((await call(stack, 'POST', START, { token })).status).toBe(409);
  });

  it('answers a wrong code with 400 invalid_code', async () => {
    const { secret } = await start('e2e-carol');
    const res = await call(stack, 'POST', CONFIRM, { token: await stack.token('e2e-carol'), body: { code: wrongCode(secret), secret } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'invalid_code', message: DEFAULT_MESSAGE.invalid_code });
  });

  it('answers 429 too_many_attempts with Retry-After after 5 wrong codes', async () => {
    const token = await stack.token('e2e-dave');
    const { secret } = await start('e2e-dave');
    for (let i = 0; i < 5; i++) {
      expect((await call(stack, 'POST', CONFIRM, { token, body: { code: wrongCode(secret), secret } })).status).toBe(400);
    }
    const res = await call(stack, 'POST', CONFIRM, { token, body: { code: totpCodeAt(secret, Date.now()), secret } });
    expect(res.status).toBe(429);
    expect(res.json).toEqual({ error: 'too_many_attempts', message: expect.any(String) });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(880); // 900 less the test's own time
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(900);
  });

  it('answers 415 unsupported_media_type to a body that is not application/json', async () => {
    const res = await call(stack, 'POST', CONFIRM, {
      token: await stack.token('e2e-erin'),
      rawBody: '{"code":"123456","secret":"GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"}',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expect(res.json).toEqual({ error: 'unsupported_media_type', message: 'send content-type: application/json' });
  });

  it('answers 400 validation_error to a body that is not JSON', async () => {
    const res = await call(stack, 'POST', CONFIRM, {
      token: await stack.token('e2e-erin'),
      rawBody: 'code=123456',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.any(String) });
  });
});

describe('accounts routes take a user token only', () => {
  for (const path of [START, CONFIRM, RECOVERY]) {
    it(`POST ${path} refuses a working API key with 401 unauthorized`, async () => {
      const created = await call(stack, 'POST', '/api-keys', { token: await stack.token('e2e-frank') });
      const apiKey: string = created.json.data.api_key;
      expect((await call(stack, 'GET', '/storage/kv', { apiKey })).status).toBe(200); // the key works elsewhere
      const res = await call(stack, 'POST', path, { apiKey, body: { code: '123456', secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ' } });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
    });
  }

  it('refuses a request without credentials with 401 unauthorized', async () => {
    const res = await call(stack, 'POST', START);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });
});
