import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { call, useLocalStack } from '../support/local-stack.js';

const stack = useLocalStack();

/** A validly signed HS256 token (like local/token.ts) whose payload is exactly `claims` plus `sub` and `exp`. */
const signed = (sub: string, claims: Record<string, unknown>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(stack.jwtSecret));

// Control characters, lone surrogates and over-long ids were refused already; hostile-inputs.test.ts
// covers them. These are the forms that used to be ignored, scoping the caller to its `sub`.
describe('the account_id claim of a bearer token', () => {
  it.each([
    ['an array', ['acct-1']],
    ['a number', 42],
    ['an object', { id: 'acct-1' }],
    ['an empty string', ''],
    ['null', null],
    ['true', true],
    ['false', false],
  ])('present as %s is 401 unauthorized, where the same sub without it or with a string account is 200', async (_name, accountId) => {
    const sub = `claim-user-${JSON.stringify(accountId)}`;
    const malformed = await call(stack, 'GET', '/api-keys', { token: await signed(sub, { account_id: accountId }) });
    expect([malformed.status, malformed.json]).toEqual([401, { error: 'unauthorized', message: expect.any(String) }]);
    expect((await call(stack, 'GET', '/api-keys', { token: await signed(sub, {}) })).status).toBe(200);
    expect((await call(stack, 'GET', '/api-keys', { token: await signed(sub, { account_id: 'acct-1' }) })).status).toBe(200);
  });
});
