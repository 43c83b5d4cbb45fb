import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { DynamoAttemptStore } from '../../functions/adapters/aws/dynamo-attempt-store.js';
import { DynamoMfaStore } from '../../functions/adapters/aws/dynamo-mfa-store.js';
import { DynamoMfaEventLog } from '../../functions/adapters/aws/dynamo-mfa-event-log.js';
import { DynamoApiKeyEventLog } from '../../functions/adapters/aws/dynamo-api-key-event-log.js';
import { DynamoApiKeyStore } from '../../functions/adapters/aws/dynamo-api-key-store.js';
import { DynamoProofLedger } from '../../functions/adapters/aws/dynamo-proof-ledger.js';
import { LocalSecretBox } from '../../functions/adapters/local-secret-box.js';
import { generateLocalSigningKey, LocalTokenSigner } from '../../functions/adapters/local-token-signer.js';
import { createAccountUseCases, type AccountsDeps, type TokenSigner } from '../../functions/domain/accounts/index.js';
import { generateTotpSecret, hashRecoveryCode, normalizeTotpSecret } from '../../functions/domain/totp/index.js';
import { createAccountsHandler } from '../../functions/handlers/accounts.js';
import { createTokenVerifier } from '../../functions/adapters/jwt-token-verifier.js';
import { Authenticator } from '../../functions/domain/authenticator.js';
import type { HttpEvent, HttpResult } from '../../functions/shared/http.js';
import { mintLocalToken } from '../../local/token.js';
import { useEngines } from '../support/engines.js';
import { RFC6238_SECRET, RFC6238_SHA1_VECTORS, totpCodeAt } from '../support/totp.js';

const START = '/accounts/totp-registration';
const CONFIRM = '/accounts/confirm-totp-registration';
const RECOVERY = '/accounts/recovery-codes/verify';

const STEP_MS = 30_000;
const WINDOW_MS = 15 * 60_000;
const STEP = 58_000_000; // 2025-02-19T21:20:00Z
const stepStart = (step: number) => step * STEP_MS;
const RFC_SECRET = RFC6238_SECRET;
const RECOVERY_CODE = /^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/;

const JWT_SECRET = randomBytes(32).toString('base64url');
const secretBox = new LocalSecretBox(randomBytes(32).toString('base64'));
/** The pinned clock every use case in this file reads. */
const clock = { nowMs: stepStart(STEP) };

const local = useEngines();
let table: string;
let deps: AccountsDeps;
let handle: (event: HttpEvent) => Promise<HttpResult>;

// An API key store that would accept any key: the bearer-only routes must refuse it anyway.
const authenticator = new Authenticator(
  createTokenVerifier({ secret: JWT_SECRET, algorithms: ['HS256'] }),
  { findByHash: async () => ({ accountId: 'acct-1', id: 'key-1', scopes: ['admin'] }) },
);

beforeAll(async () => {
  table = local.engines.env.ACCOUNTS_TABLE!;
  deps = {
    mfa: new DynamoMfaStore(local.dynamo, table),
    attempts: new DynamoAttemptStore(local.dynamo, table),
    events: new DynamoMfaEventLog(local.dynamo, table, { now: () => clock.nowMs, randomBytes }),
    secretBox,
    signer: new LocalTokenSigner([generateLocalSigningKey()]),
    proofs: new DynamoProofLedger(local.dynamo, table),
    keys: new DynamoApiKeyStore(local.dynamo, local.engines.env.AUTH_TABLE!),
    keyEvents: new DynamoApiKeyEventLog(local.dynamo, local.engines.env.AUTH_TABLE!, randomBytes),
    now: () => clock.nowMs,
    randomBytes,
    issuer: 'Flowgate',
    tokenIssuer: 'http://gateway.test',
  };
  handle = createAccountsHandler(createAccountUseCases(deps), authenticator);
});


let users = 0;
const newUser = () => `user-${++users}`;

interface Request {
  sub?: string;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  headers?: Record<string, string>;
  via?: (event: HttpEvent) => Promise<HttpResult>;
}

/** Calls the handler as API Gateway would, with a real token for `sub`. */
async function post(path: string, request: Request = {}) {
  const headers: Record<string, string> = { ...request.headers };
  if (request.sub) headers.authorization = `Bearer ${await mintLocalToken({ secret: JWT_SECRET, sub: request.sub })}`;
  const body = request.rawBody ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
  if (body !== undefined) headers['content-type'] ??= request.contentType ?? 'application/json';
  const event = { version: '2.0', routeKey: `POST ${path}`, rawPath: path, rawQueryString: '', headers, body, isBase64Encoded: false, requestContext: {} };
  const result = await (request.via ?? handle)(event as unknown as HttpEvent);
  return { status: result.statusCode, headers: result.headers ?? {}, json: result.body ? JSON.parse(result.body) : undefined };
}

const newSecret = () => generateTotpSecret(randomBytes);

/** A 6-digit code that no step within two of `nowMs` produces for `secret`. */
function wrongCode(secret: string, nowMs = clock.nowMs): string {
  const near = new Set([-2, -1, 0, 1, 2].map((d) => totpCodeAt(secret, nowMs + d * STEP_MS)));
  return ['000000', '111111', '222222', '333333', '444444', '555555'].find((code) => !near.has(code))!;
}

const confirm = (sub: string, secret: string, code = totpCodeAt(secret, clock.nowMs), via?: Request['via']) =>
  post(CONFIRM, { sub, body: { code, secret }, via });

/** Registers `sub` at the pinned time and returns its recovery codes. */
async function register(sub: string, secret = newSecret()): Promise<string[]> {
  const res = await confirm(sub, secret);
  expect(res.status).toBe(200);
  return res.json.data.recovery_codes;
}

/** The user's first (only) factor as stored, with the user's recovery codes beside it. */
async function factorItem(sub: string) {
  const item = (await local.dynamo.send(new GetCommand({ TableName: table, Key: { pk: `USER#${sub}`, sk: 'MFA#TOTP' }, ConsistentRead: true }))).Item;
  if (!item) return undefined;
  const [factor] = Object.values(item.factors as Record<string, Record<string, any>>);
  return { ...factor, recovery_code_hashes: item.recovery_code_hashes } as Record<string, any>;
}

async function failTimes(n: number, sub: string, secret: string) {
  for (let i = 0; i < n; i++) expect((await confirm(sub, secret, wrongCode(secret))).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
}

describe('authentication', () => {
  it.each([START, CONFIRM, RECOVERY])('POST %s refuses an API key with 401 unauthorized', async (path) => {
    const res = await post(path, { headers: { 'x-api-key': 'fgk_' + 'A'.repeat(43) }, body: { code: '123456', secret: RFC_SECRET } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('refuses a request without credentials with 401 unauthorized', async () => {
    const res = await post(CONFIRM, { body: { code: '123456', secret: RFC_SECRET } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });
});

describe(`POST ${START}`, () => {
  it('answers a 160-bit base32 secret and the otpauth URI for the caller', async () => {
    const sub = newUser();
    const res = await post(START, { sub });
    expect(res.status).toBe(200);
    const { secret, otpauth_uri } = res.json.data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauth_uri).toBe(`otpauth://totp/Flowgate:${sub}?secret=${secret}&issuer=Flowgate&algorithm=SHA1&digits=6&period=30`);
  });

  it('stores nothing: the user can still start again', async () => {
    const sub = newUser();
    await post(START, { sub });
    expect(await factorItem(sub)).toBeUndefined();
    expect((await post(START, { sub })).status).toBe(200);
  });

  it('answers 409 already_registered once the user has a factor', async () => {
    const sub = newUser();
    await register(sub);
    const res = await post(START, { sub });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ error: 'already_registered', message: expect.any(String) });
  });

  it('a secret it made confirms with a code from it', async () => {
    const sub = newUser();
    const { secret } = (await post(START, { sub })).json.data;
    expect((await confirm(sub, secret)).status).toBe(200);
  });
});

describe(`POST ${CONFIRM}: success`, () => {
  it('answers 200 with 10 distinct recovery codes in xxxxx-xxxxx form', async () => {
    const codes = await register(newUser());
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(RECOVERY_CODE);
  });

  it('does not require a started registration: a secret the client made itself is accepted', async () => {
    expect((await confirm(newUser(), RFC_SECRET)).status).toBe(200);
  });

  it.each([
    ['lower case', (s: string) => s.toLowerCase()],
    ['with padding', (s: string) => `${s.slice(0, 26)}======`],
    ['with spaces', (s: string) => s.replace(/(.{4})/g, '$1 ')],
  ])('accepts the secret %s', async (_, spell) => {
    const secret = normalizeTotpSecret(newSecret().slice(0, 26)); // 16 bytes, so that padding applies
    const res = await post(CONFIRM, { sub: newUser(), body: { code: totpCodeAt(secret, clock.nowMs), secret: spell(secret) } });
    expect(res.status).toBe(200);
  });

  // RFC 6238 Appendix B, SHA-1: the last six digits of each published code, at its time.
  it.each(RFC6238_SHA1_VECTORS)('accepts the RFC 6238 SHA-1 vector at %i s and records its time step', async (epochSeconds, code8) => {
    const sub = newUser();
    clock.nowMs = epochSeconds * 1000;
    try {
      expect((await confirm(sub, RFC_SECRET, code8.slice(-6))).status).toBe(200);
    } finally {
      clock.nowMs = stepStart(STEP);
    }
    expect((await factorItem(sub))!.time_step).toBe(Math.floor(epochSeconds / 30));
  });
});

describe(`POST ${CONFIRM}: the time window`, () => {
  const secret = newSecret();
  const code = totpCodeAt(secret, stepStart(STEP));
  const confirmAt = async (nowMs: number) => {
    clock.nowMs = nowMs;
    try {
      return await confirm(newUser(), secret, code);
    } finally {
      clock.nowMs = stepStart(STEP);
    }
  };

  it('accepts a code from the next step at the first millisecond of the step before it', async () => {
    expect((await confirmAt(stepStart(STEP - 1))).status).toBe(200);
  });

  it('accepts a code from the previous step at the last millisecond of the step after it', async () => {
    expect((await confirmAt(stepStart(STEP + 2) - 1)).status).toBe(200);
  });

  it('refuses a code two steps ahead (last millisecond of two steps before) with 400 invalid_code', async () => {
    const res = await confirmAt(stepStart(STEP - 1) - 1);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('refuses a code two steps old (first millisecond of two steps after) with 400 invalid_code', async () => {
    const res = await confirmAt(stepStart(STEP + 2));
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('records the time step of the accepted code, not of the clock', async () => {
    const sub = newUser();
    clock.nowMs = stepStart(STEP + 1) + 12_345;
    try {
      expect((await confirm(sub, secret, code)).status).toBe(200);
    } finally {
      clock.nowMs = stepStart(STEP);
    }
    expect((await factorItem(sub))!.time_step).toBe(STEP);
  });
});

describe(`POST ${CONFIRM}: request validation`, () => {
  it('answers 415 unsupported_media_type for a body that is not application/json', async () => {
    const res = await post(CONFIRM, { sub: newUser(), rawBody: JSON.stringify({ code: '123456', secret: RFC_SECRET }), contentType: 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.json).toEqual({ error: 'unsupported_media_type', message: 'send content-type: application/json' });
  });

  it.each([
    ['a body that is not JSON', '{"code": "123456",'],
    ['a JSON array', JSON.stringify([RFC_SECRET, '123456'])],
    ['a missing code', JSON.stringify({ secret: RFC_SECRET })],
    ['a numeric code', JSON.stringify({ code: 123456, secret: RFC_SECRET })],
    ['a missing secret', JSON.stringify({ code: '123456' })],
    ['a secret that is not a string', JSON.stringify({ code: '123456', secret: [RFC_SECRET] })],
    ['a 5-digit code', JSON.stringify({ code: '12345', secret: RFC_SECRET })],
    ['a secret that is not base32', JSON.stringify({ code: '123456', secret: 'GEZDGNBVGY3TQOJQ1EZDGNBVGY' })],
    ['a secret of 15 bytes', JSON.stringify({ code: '123456', secret: 'GEZDGNBVGY3TQOJQGEZDGNBV' })],
  ])('answers 400 validation_error for %s', async (_, rawBody) => {
    const res = await post(CONFIRM, { sub: newUser(), rawBody });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.any(String) });
  });

  it('does not count validation errors as attempts', async () => {
    const sub = newUser();
    const secret = newSecret();
    for (let i = 0; i < 6; i++) expect((await confirm(sub, secret, '12345')).status).toBe(400);
    expect((await confirm(sub, secret)).status).toBe(200);
  });
});

describe(`POST ${CONFIRM}: already registered and replay`, () => {
  it('answers 409 already_registered to the same code confirmed again', async () => {
    const sub = newUser();
    const secret = newSecret();
    await register(sub, secret);
    const res = await confirm(sub, secret);
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ error: 'already_registered', message: expect.any(String) });
  });

  it('answers 409 before checking the code, so a registered user spends no attempt', async () => {
    const sub = newUser();
    const secret = newSecret();
    await register(sub, secret);
    const before = await deps.attempts.listSlots(sub, 'totp');
    expect((await confirm(sub, secret, wrongCode(secret))).status).toBe(409);
    expect(await deps.attempts.listSlots(sub, 'totp')).toEqual(before);
  });

  it('lets exactly one of concurrent confirmations with the same code win; the others get 409', async () => {
    const sub = newUser();
    const secret = newSecret();
    const results = await Promise.all(Array.from({ length: 4 }, () => confirm(sub, secret)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
  });

  it('keeps the winner\'s recovery codes when confirmations race', async () => {
    const sub = newUser();
    const secret = newSecret();
    const results = await Promise.all(Array.from({ length: 3 }, () => confirm(sub, secret)));
    const winner = results.find((r) => r.status === 200)!.json.data.recovery_codes as string[];
    const stored = (await factorItem(sub))!.recovery_code_hashes as Set<string>;
    expect(stored).toEqual(new Set(winner.map((code) => hashRecoveryCode(sub, code))));
  });

  it('keys the factor by user (sub): another user may register the same secret', async () => {
    const secret = newSecret();
    await register(newUser(), secret);
    expect((await confirm(newUser(), secret)).status).toBe(200);
  });
});

describe(`POST ${CONFIRM}: storage`, () => {
  it('stores the secret sealed, never in plain text', async () => {
    const sub = newUser();
    const secret = newSecret();
    await register(sub, secret);
    const item = await factorItem(sub);
    expect(JSON.stringify(item)).not.toContain(secret);
    expect(await secretBox.open(item!.sealed_secret as string, { subject: sub, purpose: 'totp' })).toBe(secret);
  });

  it('seals the secret to its user: it does not open under another subject', async () => {
    const sub = newUser();
    await register(sub);
    const item = await factorItem(sub);
    await expect(secretBox.open(item!.sealed_secret as string, { subject: newUser(), purpose: 'totp' })).rejects.toThrow();
  });

  it('stores the canonical secret whatever its spelling', async () => {
    const sub = newUser();
    const secret = newSecret();
    await post(CONFIRM, { sub, body: { code: totpCodeAt(secret, clock.nowMs), secret: secret.toLowerCase() } });
    expect(await secretBox.open((await factorItem(sub))!.sealed_secret as string, { subject: sub, purpose: 'totp' })).toBe(secret);
  });

  it('stores recovery codes only as their hashes', async () => {
    const sub = newUser();
    const codes = await register(sub);
    const item = await factorItem(sub);
    const text = JSON.stringify({ ...item, recovery_code_hashes: [...(item!.recovery_code_hashes as Set<string>)] });
    for (const code of codes) {
      expect(text).not.toContain(code);
      expect(text).not.toContain(code.replace('-', ''));
    }
    expect(item!.recovery_code_hashes).toEqual(new Set(codes.map((code) => hashRecoveryCode(sub, code))));
  });
});

describe(`POST ${CONFIRM}: throttling`, () => {
  it('answers the 5th wrong code with 400 invalid_code', async () => {
    const sub = newUser();
    const secret = newSecret();
    await failTimes(4, sub, secret);
    expect((await confirm(sub, secret, wrongCode(secret))).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('answers 429 too_many_attempts with Retry-After after 5 wrong codes', async () => {
    const sub = newUser();
    const secret = newSecret();
    await failTimes(5, sub, secret);
    const res = await confirm(sub, secret, wrongCode(secret));
    expect(res.status).toBe(429);
    expect(res.json).toEqual({ error: 'too_many_attempts', message: expect.any(String) });
    expect(res.headers['retry-after']).toBe('900');
  });

  it('refuses even a valid code while blocked', async () => {
    const sub = newUser();
    const secret = newSecret();
    await failTimes(5, sub, secret);
    expect((await confirm(sub, secret)).status).toBe(429);
  });

  it('counts Retry-After down to when the oldest failure leaves the window', async () => {
    const sub = newUser();
    const secret = newSecret();
    await failTimes(5, sub, secret);
    clock.nowMs += 300_000;
    try {
      expect((await confirm(sub, secret)).headers['retry-after']).toBe('600');
    } finally {
      clock.nowMs = stepStart(STEP);
    }
  });

  it('is still blocked at the last millisecond of the window', async () => {
    const sub = newUser();
    const secret = newSecret();
    await failTimes(5, sub, secret);
    clock.nowMs += WINDOW_MS - 1;
    try {
      const res = await confirm(sub, secret);
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      clock.nowMs = stepStart(STEP);
    }
  });

  it('accepts a valid code once the window has passed', async () => {
    const sub = newUser();
    const secret = newSecret();
    await failTimes(5, sub, secret);
    clock.nowMs += WINDOW_MS;
    try {
      expect((await confirm(sub, secret)).status).toBe(200);
    } finally {
      clock.nowMs = stepStart(STEP);
    }
  });

  it('unblocks one attempt when only the oldest failure has left the window', async () => {
    const sub = newUser();
    const secret = newSecret();
    await failTimes(1, sub, secret);
    clock.nowMs += 60_000;
    try {
      await failTimes(4, sub, secret);
      clock.nowMs = stepStart(STEP) + WINDOW_MS;
      expect((await confirm(sub, secret, wrongCode(secret))).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
      const res = await confirm(sub, secret);
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('60');
    } finally {
      clock.nowMs = stepStart(STEP);
    }
  });

  it('counts failures per user: another user is not blocked', async () => {
    const secret = newSecret();
    await failTimes(5, newUser(), secret);
    expect((await confirm(newUser(), secret)).status).toBe(200);
  });

  it('gives a burst of 20 concurrent wrong codes 5 checks; the rest get 429', async () => {
    const sub = newUser();
    const secret = newSecret();
    const results = await Promise.all(Array.from({ length: 20 }, () => confirm(sub, secret, wrongCode(secret))));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 400)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });

  it('does not leave a claimed attempt behind after a success', async () => {
    const sub = newUser();
    const secret = newSecret();
    await failTimes(2, sub, secret);
    await register(sub, secret);
    expect(await deps.attempts.listSlots(sub, 'totp')).toHaveLength(2);
  });
});

describe(`POST ${RECOVERY}`, () => {
  const verify = (sub: string, code: unknown) => post(RECOVERY, { sub, body: { code } });

  it('accepts an issued code once and answers how many remain', async () => {
    const sub = newUser();
    const [code] = await register(sub);
    const res = await verify(sub, code);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: { remaining: 9, mfa_token: expect.any(String), expires_at: expect.any(String) } });
  });

  it('refuses a used code with 401 invalid_code (as a wrong TOTP code at sign-in)', async () => {
    const sub = newUser();
    const [code] = await register(sub);
    await verify(sub, code);
    const res = await verify(sub, code);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('counts down to 0 as every code is used', async () => {
    const sub = newUser();
    const codes = await register(sub);
    const remaining: number[] = [];
    for (const code of codes) remaining.push((await verify(sub, code)).json.data.remaining);
    expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
  });

  it('accepts a code typed in capitals without its dash', async () => {
    const sub = newUser();
    const [code] = await register(sub);
    expect((await verify(sub, code!.replace('-', '').toUpperCase())).status).toBe(200);
  });

  it('refuses a code that was never issued with 401 invalid_code', async () => {
    const sub = newUser();
    await register(sub);
    expect((await verify(sub, '00000-00000')).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('refuses another user\'s code with 401 invalid_code', async () => {
    const [code] = await register(newUser());
    const other = newUser();
    await register(other);
    expect((await verify(other, code)).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('refuses any code from a user without a factor with 401 invalid_code', async () => {
    expect((await verify(newUser(), '00000-00000')).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('lets exactly one of concurrent uses of a code succeed', async () => {
    const sub = newUser();
    const [code] = await register(sub);
    const results = await Promise.all(Array.from({ length: 4 }, () => verify(sub, code)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
  });

  it.each([
    ['a missing code', {}],
    ['a numeric code', { code: 1234567890 }],
  ])('answers 400 validation_error for %s', async (_, body) => {
    const res = await post(RECOVERY, { sub: newUser(), body });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: 'validation_error', message: expect.any(String) });
  });

  it('answers 415 unsupported_media_type for a body that is not application/json', async () => {
    const res = await post(RECOVERY, { sub: newUser(), rawBody: '{"code":"00000-00000"}', contentType: 'text/plain' });
    expect(res.status).toBe(415);
  });

  it('answers 429 too_many_attempts with Retry-After after 5 wrong codes', async () => {
    const sub = newUser();
    await register(sub);
    for (let i = 0; i < 5; i++) expect((await verify(sub, '00000-00000')).status).toBe(401);
    const res = await verify(sub, '00000-00000');
    expect(res.status).toBe(429);
    expect(res.json).toEqual({ error: 'too_many_attempts', message: expect.any(String) });
    expect(res.headers['retry-after']).toBe('900');
  });

  it('does not count strings that are not recovery codes as attempts', async () => {
    const sub = newUser();
    const [code] = await register(sub);
    for (let i = 0; i < 6; i++) expect((await verify(sub, 'nope')).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
    expect((await verify(sub, code)).status).toBe(200);
  });

  it('does not spend the budget on a success', async () => {
    const sub = newUser();
    const [code] = await register(sub);
    for (let i = 0; i < 4; i++) await verify(sub, '00000-00000');
    expect((await verify(sub, code)).status).toBe(200);
    expect((await verify(sub, '00000-00000')).status).toBe(401);
  });

  it('keeps its budget apart from TOTP failures', async () => {
    const sub = newUser();
    const secret = newSecret();
    await failTimes(5, sub, secret);
    expect((await verify(sub, '00000-00000')).status).toBe(401);
  });

  it('does not spend the TOTP budget on recovery failures', async () => {
    const sub = newUser();
    for (let i = 0; i < 5; i++) await verify(sub, '00000-00000');
    expect((await confirm(sub, newSecret())).status).toBe(200);
  });
});

describe('faults', () => {
  const brokenBox = { seal: async () => Promise.reject(new Error('KMS unavailable')), open: async () => '' };

  it('answers 500 internal_error and stores nothing when the secret cannot be sealed', async () => {
    const via = createAccountsHandler(createAccountUseCases({ ...deps, secretBox: brokenBox }), authenticator);
    const sub = newUser();
    const quiet = [process.stdout, process.stderr].map((stream) => vi.spyOn(stream, 'write').mockImplementation(() => true));
    const res = await confirm(sub, newSecret(), undefined, via).finally(() => quiet.forEach((spy) => spy.mockRestore()));
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ error: 'internal_error' });
    expect(await factorItem(sub)).toBeUndefined();
    expect(await deps.attempts.listSlots(sub, 'totp')).toEqual([]);
  });

  it('logs a fault without the secret, the code or the token', async () => {
    const via = createAccountsHandler(createAccountUseCases({ ...deps, secretBox: brokenBox }), authenticator);
    const sub = newUser();
    const secret = newSecret();
    const code = totpCodeAt(secret, clock.nowMs);
    const written: string[] = [];
    const capture = (chunk: unknown) => (written.push(String(chunk)), true);
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    try {
      await post(CONFIRM, { sub, body: { code, secret }, via, headers: { authorization: `Bearer ${await mintLocalToken({ secret: JWT_SECRET, sub })}` } });
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
    const log = written.join('');
    expect(log).toContain('KMS unavailable'); // the fault itself was logged
    expect(log).not.toContain(secret);
    expect(log).not.toContain(code);
    expect(log).not.toContain(JWT_SECRET);
    expect(log).not.toMatch(/eyJ[A-Za-z0-9_-]+\./); // no JWT
  });
});

describe('POST /accounts/totp/verify and the step-up proof (pinned clock)', () => {
  const VERIFY = '/accounts/totp/verify';
  const REGENERATE = '/accounts/recovery-codes/regenerate';

  it('accepts only codes of later steps than the last accepted one: enrolment step refused, next step once', async () => {
    const sub = newUser();
    const secret = newSecret();
    await register(sub, secret);
    expect((await post(VERIFY, { sub, body: { code: totpCodeAt(secret, clock.nowMs) } })).status).toBe(401);
    expect((await post(VERIFY, { sub, body: { code: totpCodeAt(secret, clock.nowMs - STEP_MS) } })).status).toBe(401);
    const next = totpCodeAt(secret, clock.nowMs + STEP_MS);
    const accepted = await post(VERIFY, { sub, body: { code: next } });
    expect(accepted.status).toBe(200);
    expect(accepted.json.data.expires_at).toBe(new Date(clock.nowMs + 600_000).toISOString());
    expect((await post(VERIFY, { sub, body: { code: next } })).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
    expect((await factorItem(sub))!.time_step).toBe(STEP + 1);
  });

  it('answers 400 validation_error for a code not of 6 digits, at no cost', async () => {
    const sub = newUser();
    await register(sub);
    for (let i = 0; i < 6; i++) expect((await post(VERIFY, { sub, body: { code: '12345' } })).status).toBe(400);
  });

  it('after a regeneration every one of the ten old recovery codes fails, and the new ones work', async () => {
    const sub = newUser();
    const secret = newSecret();
    const old = await register(sub, secret);
    const proof = (await post(VERIFY, { sub, body: { code: totpCodeAt(secret, clock.nowMs + STEP_MS), purpose: 'regenerate_recovery_codes' } })).json.data.mfa_token as string;
    const fresh: string[] = (await post(REGENERATE, { sub, headers: { 'x-mfa-token': proof } })).json.data.recovery_codes;
    const saved = clock.nowMs;
    try {
      // Four failures a window, so the recovery budget never answers instead of the code.
      for (let i = 0; i < old.length; i++) {
        if (i > 0 && i % 4 === 0) clock.nowMs += WINDOW_MS;
        expect((await post(RECOVERY, { sub, body: { code: old[i] } })).json, old[i]).toEqual({ error: 'invalid_code', message: expect.any(String) });
      }
      expect((await post(RECOVERY, { sub, body: { code: fresh[0] } })).json.data.remaining).toBe(9);
    } finally {
      clock.nowMs = saved;
    }
  });

  it('a user may have ten factors; the eleventh is 409 conflict before any code is checked', async () => {
    const sub = newUser();
    const secret = newSecret();
    const recoveryCodes = await register(sub, secret);
    // Each added factor spends its own add_factor proof (from a recovery code, which the pinned clock does not limit).
    const proofFor = async (code: string) => ({ 'x-mfa-token': (await post(RECOVERY, { sub, body: { code, purpose: 'add_factor' } })).json.data.mfa_token as string });
    for (let i = 2; i <= 10; i++) {
      const another = newSecret();
      const res = await post(CONFIRM, { sub, headers: await proofFor(recoveryCodes[i - 2]!), body: { code: totpCodeAt(another, clock.nowMs), secret: another, name: `Device ${i}` } });
      expect(res.status, res.json?.error).toBe(200);
    }
    const headers = await proofFor(recoveryCodes[9]!);
    const eleventh = await post(CONFIRM, { sub, headers, body: { code: '000000', secret: newSecret() } });
    expect(eleventh.status).toBe(409);
    expect(eleventh.json).toEqual({ error: 'conflict', message: 'a user may have at most 10 factors' });
  });
});

describe('a signing failure spends nothing (kms:Sign fails once; dynalite and the real signer otherwise)', () => {
  const VERIFY = '/accounts/totp/verify';

  /** The stack's signer, but its next `failures` signatures fail as a throttled kms:Sign does. */
  function flakySigner(failures: number): TokenSigner & { calls: number } {
    const signer = {
      calls: 0,
      publicKeys: () => deps.signer.publicKeys(),
      async sign(kid: string, data: Uint8Array) {
        signer.calls++;
        if (failures-- > 0) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
        return deps.signer.sign(kid, data);
      },
    };
    return signer;
  }

  async function quietly<T>(run: () => Promise<T>): Promise<T> {
    const quiet = [process.stdout, process.stderr].map((stream) => vi.spyOn(stream, 'write').mockImplementation(() => true));
    return run().finally(() => quiet.forEach((spy) => spy.mockRestore()));
  }

  it('answers 503 unavailable with Retry-After, and the same TOTP code signs in on retry, once', async () => {
    const sub = newUser();
    const secret = newSecret();
    await register(sub, secret);
    const signer = flakySigner(1);
    const via = createAccountsHandler(createAccountUseCases({ ...deps, signer }), authenticator);
    const code = totpCodeAt(secret, clock.nowMs + STEP_MS);

    const failed = await quietly(() => post(VERIFY, { sub, body: { code }, via }));
    expect(failed.status).toBe(503);
    expect(failed.json).toEqual({ error: 'unavailable' });
    expect(failed.headers['retry-after']).toBe('1');
    expect((await factorItem(sub))!.time_step).toBe(STEP); // the step was not recorded
    expect(await deps.attempts.listSlots(sub, 'totp')).toEqual([]); // nor counted as a failure

    const retried = await post(VERIFY, { sub, body: { code }, via });
    expect(retried.status).toBe(200);
    expect(retried.json.data.mfa_token).toEqual(expect.any(String));
    expect((await factorItem(sub))!.time_step).toBe(STEP + 1);
    // Single use still holds: the code that finally worked does not work again.
    expect((await post(VERIFY, { sub, body: { code }, via })).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('answers 503 with Retry-After, and the same recovery code works on retry, once', async () => {
    const sub = newUser();
    const [code] = await register(sub);
    const signer = flakySigner(1);
    const via = createAccountsHandler(createAccountUseCases({ ...deps, signer }), authenticator);

    const failed = await quietly(() => post(RECOVERY, { sub, body: { code }, via }));
    expect(failed.status).toBe(503);
    expect(failed.json).toEqual({ error: 'unavailable' });
    expect(failed.headers['retry-after']).toBe('1');
    expect((await factorItem(sub))!.recovery_code_hashes.size).toBe(10);

    const retried = await post(RECOVERY, { sub, body: { code }, via });
    expect(retried.status).toBe(200);
    expect(retried.json.data.remaining).toBe(9);
    expect((await post(RECOVERY, { sub, body: { code }, via })).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
  });

  it('answers the proof when the audit write after the spend fails: the fault is logged, the code not lost', async () => {
    const sub = newUser();
    const secret = newSecret();
    await register(sub, secret);
    const events = { list: deps.events.list.bind(deps.events), record: async () => Promise.reject(new Error('audit table throttled')) };
    const via = createAccountsHandler(createAccountUseCases({ ...deps, events }), authenticator);
    const res = await quietly(() => post(VERIFY, { sub, body: { code: totpCodeAt(secret, clock.nowMs + STEP_MS) }, via }));
    expect(res.status).toBe(200);
    expect(res.json.data.mfa_token).toEqual(expect.any(String));
  });

  it('signs nothing for a wrong recovery code (a guess costs no kms:Sign)', async () => {
    const sub = newUser();
    await register(sub);
    const signer = flakySigner(0);
    const via = createAccountsHandler(createAccountUseCases({ ...deps, signer }), authenticator);
    expect((await post(RECOVERY, { sub, body: { code: '00000-00000' }, via })).json).toEqual({ error: 'invalid_code', message: expect.any(String) });
    expect(signer.calls).toBe(0);
  });

  it('of concurrent uses of one recovery code, while the signer fails for some, exactly one gets a proof and the rest spend nothing of it', async () => {
    const sub = newUser();
    const [code] = await register(sub);
    const via = createAccountsHandler(createAccountUseCases({ ...deps, signer: flakySigner(2) }), authenticator);
    const results = await quietly(() => Promise.all(Array.from({ length: 5 }, () => post(RECOVERY, { sub, body: { code }, via }))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 503)).toHaveLength(2);
    expect((await factorItem(sub))!.recovery_code_hashes.size).toBe(9);
  });
});
