import { describe, expect, it } from 'vitest';
import { authorizeUrl, base64url, codeChallenge, completeSignIn, createState, createVerifier, exchangeCode } from '../../console/pkce.js';

/** RFC 7636 Appendix B: the verifier's 32 octets, the verifier, and its S256 challenge. */
const RFC7636_OCTETS = [116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121];
const RFC7636_VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const RFC7636_CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

const CONFIG = { domain: 'https://flowgate-test.auth.eu-west-1.amazoncognito.com', clientId: 'client123' };
const REDIRECT = 'https://api.example.com/console';

/** A token endpoint that records what it was sent and answers `answer`. */
function tokenEndpoint(status: number, answer: unknown) {
  const sent: { url: string; body: URLSearchParams; headers: Record<string, string> }[] = [];
  const fetchFn = (async (url: string, init: RequestInit) => {
    sent.push({ url, body: new URLSearchParams(String(init.body)), headers: init.headers as Record<string, string> });
    return new Response(JSON.stringify(answer), { status, headers: { 'content-type': 'application/json' } });
  }) as unknown as typeof fetch;
  return { sent, fetchFn };
}

describe('console PKCE helpers (RFC 7636)', () => {
  it('createVerifier(random) is base64url of 32 random octets: Appendix B\'s octets give its verifier', () => {
    expect(createVerifier(() => new Uint8Array(RFC7636_OCTETS))).toBe(RFC7636_VERIFIER);
  });

  it('codeChallenge(verifier) is base64url(SHA-256(verifier)): Appendix B\'s verifier gives its challenge', async () => {
    await expect(codeChallenge(RFC7636_VERIFIER)).resolves.toBe(RFC7636_CHALLENGE);
  });

  it('verifiers are 43 characters of the unreserved set, and differ each time', () => {
    const a = createVerifier();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(createVerifier()).not.toBe(a);
    expect(createState()).not.toBe(createState());
  });

  it('base64url leaves no padding and uses - and _', () => {
    expect(base64url(new Uint8Array([0xfb, 0xff]))).toBe('-_8');
  });

  it('authorizeUrl asks Cognito for a code with the S256 challenge, the state and the console as redirect', () => {
    const url = new URL(authorizeUrl(CONFIG, { redirectUri: REDIRECT, state: 's1', challenge: RFC7636_CHALLENGE }));
    expect(url.origin + url.pathname).toBe(`${CONFIG.domain}/oauth2/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code', client_id: 'client123', redirect_uri: REDIRECT, scope: 'openid email', state: 's1',
      code_challenge_method: 'S256', code_challenge: RFC7636_CHALLENGE,
    });
  });

  it('exchangeCode posts the code and the verifier, without a client secret, and returns the ID token', async () => {
    const endpoint = tokenEndpoint(200, { id_token: 'id.jwt', access_token: 'access.jwt', token_type: 'Bearer' });
    await expect(exchangeCode(CONFIG, { code: 'c1', verifier: RFC7636_VERIFIER, redirectUri: REDIRECT }, endpoint.fetchFn)).resolves.toBe('id.jwt');
    expect(endpoint.sent).toHaveLength(1);
    expect(endpoint.sent[0]!.url).toBe(`${CONFIG.domain}/oauth2/token`);
    expect(endpoint.sent[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(endpoint.sent[0]!.body)).toEqual({
      grant_type: 'authorization_code', client_id: 'client123', code: 'c1', redirect_uri: REDIRECT, code_verifier: RFC7636_VERIFIER,
    });
  });

  it('exchangeCode refuses an error answer or one without an ID token', async () => {
    await expect(exchangeCode(CONFIG, { code: 'c', verifier: 'v', redirectUri: REDIRECT }, tokenEndpoint(400, { error: 'invalid_grant' }).fetchFn))
      .rejects.toMatchObject({ code: 'sign_in_refused' });
    await expect(exchangeCode(CONFIG, { code: 'c', verifier: 'v', redirectUri: REDIRECT }, tokenEndpoint(200, { access_token: 'a' }).fetchFn))
      .rejects.toMatchObject({ code: 'sign_in_refused' });
  });

  it('completeSignIn refuses a callback whose state is not this tab\'s, before sending the code anywhere', async () => {
    const endpoint = tokenEndpoint(200, { id_token: 'id.jwt' });
    const pending = { state: 'mine', verifier: RFC7636_VERIFIER };
    await expect(completeSignIn(CONFIG, new URLSearchParams('code=c&state=theirs'), pending, REDIRECT, endpoint.fetchFn)).rejects.toMatchObject({ code: 'sign_in_state' });
    await expect(completeSignIn(CONFIG, new URLSearchParams('code=c'), pending, REDIRECT, endpoint.fetchFn)).rejects.toMatchObject({ code: 'sign_in_state' });
    await expect(completeSignIn(CONFIG, new URLSearchParams('code=c&state=mine'), undefined, REDIRECT, endpoint.fetchFn)).rejects.toMatchObject({ code: 'sign_in_state' });
    expect(endpoint.sent).toEqual([]);
    await expect(completeSignIn(CONFIG, new URLSearchParams('error=access_denied&state=mine'), pending, REDIRECT, endpoint.fetchFn)).rejects.toMatchObject({ code: 'sign_in_refused' });
    await expect(completeSignIn(CONFIG, new URLSearchParams('code=c&state=mine'), pending, REDIRECT, endpoint.fetchFn)).resolves.toBe('id.jwt');
    expect(endpoint.sent[0]!.body.get('code_verifier')).toBe(RFC7636_VERIFIER);
  });
});
