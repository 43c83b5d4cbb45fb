import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkBasicSecret,
  checkStaticTokenSecret,
  verifyBasic,
  verifyStaticToken,
  type StaticTokenParams,
} from '../../../../functions/domain/webhooks/senders/primitives/token.js';
import { arbitraryContext, contextFor } from '../../../support/verify-context.js';

const HEADER: StaticTokenParams = { location: 'header', header: 'x-gitlab-token' };
const BEARER: StaticTokenParams = { location: 'header', header: 'authorization', scheme: 'Bearer' };
const NAMED: StaticTokenParams = { location: 'named_header' };
const ITEMS: StaticTokenParams = { location: 'body_items', array: 'value', field: 'clientState' };
const TOKEN = 'glpat-like-token-123';
const BODY = '{"object_kind":"push"}';

describe('verifyStaticToken(params, ctx) from a fixed header', () => {
  const verify = (headers: Record<string, string>, secrets = [TOKEN], params = HEADER) => verifyStaticToken(params, contextFor({ body: BODY, headers, secrets }));

  it('returns true for the token, and false for another, a prefix, a longer one, or none', () => {
    expect(verify({ 'X-Gitlab-Token': TOKEN })).toBe(true);
    for (const other of ['wrong', TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase()]) expect(verify({ 'X-Gitlab-Token': other })).toBe(false);
    expect(verify({})).toBe(false);
    expect(verify({ 'X-Other-Token': TOKEN })).toBe(false);
  });

  it('accepts either of two tokens (rotation) and ignores empty ones', () => {
    expect(verify({ 'X-Gitlab-Token': TOKEN }, ['old-token', TOKEN])).toBe(true);
    expect(verify({ 'X-Gitlab-Token': '' }, [''])).toBe(false);
  });

  it('with a scheme, wants `<scheme> <token>`, the scheme in any case', () => {
    expect(verify({ Authorization: `Bearer ${TOKEN}` }, [TOKEN], BEARER)).toBe(true);
    expect(verify({ Authorization: `bearer ${TOKEN}` }, [TOKEN], BEARER)).toBe(true);
    expect(verify({ Authorization: TOKEN }, [TOKEN], BEARER)).toBe(false);
    expect(verify({ Authorization: `Basic ${TOKEN}` }, [TOKEN], BEARER)).toBe(false);
  });

  it('refuses a token of over 8 KB without comparing it', () => {
    expect(verify({ 'X-Gitlab-Token': 'x'.repeat(9_000) }, ['x'.repeat(9_000)])).toBe(false);
  });
});

describe('verifyStaticToken(params, ctx) from a header the pasted line names', () => {
  const verify = (headers: Record<string, string>, secrets: string[]) => verifyStaticToken(NAMED, contextFor({ body: BODY, headers, secrets }));

  it('returns true when the named header carries the value', () => {
    expect(verify({ Authorization: 'okta-secret' }, ['Authorization: okta-secret'])).toBe(true);
    expect(verify({ 'X-Custom-Auth': 'bc value with spaces' }, ['x-custom-auth:bc value with spaces'])).toBe(true);
  });

  it('returns false for another value, another header, or a pasted value that is not a header line', () => {
    expect(verify({ Authorization: 'other' }, ['Authorization: okta-secret'])).toBe(false);
    expect(verify({ 'X-Other': 'okta-secret' }, ['Authorization: okta-secret'])).toBe(false);
    expect(verify({ Authorization: 'okta-secret' }, ['okta-secret'])).toBe(false);
    expect(verify({ 'bad name': 'v' }, ['bad name: v'])).toBe(false);
  });

  it('accepts any of several lines (rotation, even to another header)', () => {
    expect(verify({ 'X-New': 'n' }, ['Authorization: okta-secret', 'X-New: n'])).toBe(true);
  });
});

describe('verifyStaticToken(params, ctx) from every item of a JSON array', () => {
  const notification = (clientState: unknown) => ({ subscriptionId: 's', changeType: 'created', clientState });
  const verify = (body: unknown, secrets = ['secretClientValue']) =>
    verifyStaticToken(ITEMS, contextFor({ body: typeof body === 'string' ? body : JSON.stringify(body), secrets }));

  it('returns true when every item carries a pasted value', () => {
    expect(verify({ value: [notification('secretClientValue'), notification('secretClientValue')] })).toBe(true);
    expect(verify({ value: [notification('old'), notification('secretClientValue')] }, ['old', 'secretClientValue'])).toBe(true);
  });

  it('returns false when any item lacks it or carries another', () => {
    expect(verify({ value: [notification('secretClientValue'), notification('forged')] })).toBe(false);
    expect(verify({ value: [notification('secretClientValue'), { subscriptionId: 's' }] })).toBe(false);
    expect(verify({ value: [notification(42)] })).toBe(false);
  });

  it('returns false for an empty array, no array, or a body that is not JSON', () => {
    for (const body of [{ value: [] }, { value: 'secretClientValue' }, {}, [], 'null', 'not json', '']) expect(verify(body)).toBe(false);
  });
});

describe('verifyBasic(params, ctx)', () => {
  const basic = (credentials: string) => ({ Authorization: `Basic ${Buffer.from(credentials).toString('base64')}` });
  const verify = (headers: Record<string, string>, secrets = ['postmark:s3cr:et']) => verifyBasic({}, contextFor({ body: BODY, headers, secrets }));

  it('returns true for the pasted username:password (the password may hold colons)', () => {
    expect(verify(basic('postmark:s3cr:et'))).toBe(true);
    expect(verify({ Authorization: `basic ${Buffer.from('postmark:s3cr:et').toString('base64')}` })).toBe(true);
  });

  it('returns false for another password, another user, a prefix, or none', () => {
    for (const other of ['postmark:wrong', 'other:s3cr:et', 'postmark:s3cr', 'postmark', ':']) expect(verify(basic(other))).toBe(false);
    expect(verify({})).toBe(false);
  });

  it('returns false for another scheme or credentials that are not strict base64', () => {
    expect(verify({ Authorization: `Bearer ${Buffer.from('postmark:s3cr:et').toString('base64')}` })).toBe(false);
    expect(verify({ Authorization: 'Basic postmark:s3cr:et' })).toBe(false);
    expect(verify({ Authorization: 'Basic !!!!' })).toBe(false);
  });

  it('accepts either of two credentials (rotation)', () => {
    expect(verify(basic('postmark:new'), ['postmark:old', 'postmark:new'])).toBe(true);
  });
});

describe('the token primitives never throw', () => {
  it('on arbitrary headers, bodies and secrets, for every location', () => {
    fc.assert(
      fc.property(arbitraryContext(['x-gitlab-token', 'authorization', 'x-custom-auth']), (ctx) => {
        for (const params of [HEADER, BEARER, NAMED, ITEMS]) expect(typeof verifyStaticToken(params, ctx)).toBe('boolean');
        expect(typeof verifyBasic({}, ctx)).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  });
});

describe('checkStaticTokenSecret(secret, params) and checkBasicSecret(secret)', () => {
  it('accepts a plain token and refuses empty, spaced, multi-line ones', () => {
    expect(checkStaticTokenSecret(TOKEN, HEADER)).toBeUndefined();
    expect(checkStaticTokenSecret('', HEADER)).toMatch(/empty/);
    expect(checkStaticTokenSecret(` ${TOKEN}`, HEADER)).toMatch(/spaces/);
    expect(checkStaticTokenSecret(`a\nb`, HEADER)).toMatch(/line break/);
  });

  it('wants a header line for a named header', () => {
    expect(checkStaticTokenSecret('Authorization: s', NAMED)).toBeUndefined();
    expect(checkStaticTokenSecret('just-a-value', NAMED)).toMatch(/Name: value/);
  });

  it('wants username:password', () => {
    expect(checkBasicSecret('user:pa:ss')).toBeUndefined();
    for (const bad of ['user', ':pass', 'user:', '']) expect(checkBasicSecret(bad)).toMatch(/username:password/);
  });
});
