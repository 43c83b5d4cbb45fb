import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousA11yViolations, useBrowser } from '../support/browser.js';
import { useLocalStack } from '../support/local-stack.js';

const CLIENT_ID = 'console-test-client';

/**
 * A stand-in for the Cognito hosted UI, speaking the parts of OAuth 2.0 the console uses:
 * `/oauth2/authorize` signs the user in at once and redirects back with a code, `/oauth2/token`
 * gives an ID token only for the verifier whose S256 challenge came with that code (RFC 7636),
 * and `/logout` redirects to the registered sign-out URL.
 */
class StandInAuthorizationServer {
  server!: Server;
  origin = '';
  /** The console's URL, registered as the only callback and sign-out URL. */
  consoleUrl = '';
  idToken = '';
  readonly codes = new Map<string, { challenge: string; redirectUri: string }>();
  readonly tokenRequests: URLSearchParams[] = [];
  logouts = 0;

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const url = new URL(request.url!, this.origin);
      const fail = (status: number, error: string) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
      if (request.method === 'GET' && url.pathname === '/oauth2/authorize') {
        const q = url.searchParams;
        if (q.get('client_id') !== CLIENT_ID || q.get('redirect_uri') !== this.consoleUrl || q.get('response_type') !== 'code') return fail(400, 'invalid_request');
        if (q.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? '')) return fail(400, 'invalid_request');
        const code = randomBytes(16).toString('hex');
        this.codes.set(code, { challenge: q.get('code_challenge')!, redirectUri: q.get('redirect_uri')! });
        return response.writeHead(302, { location: `${this.consoleUrl}?${new URLSearchParams({ code, state: q.get('state') ?? '' })}` }).end();
      }
      if (request.method === 'POST' && url.pathname === '/oauth2/token') {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          const form = new URLSearchParams(body);
          this.tokenRequests.push(form);
          // As Cognito does, the token endpoint answers browsers of other origins.
          response.setHeader('access-control-allow-origin', request.headers.origin ?? '*');
          const issued = this.codes.get(form.get('code') ?? '');
          this.codes.delete(form.get('code') ?? '');
          const proof = createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url');
          if (!issued || form.get('grant_type') !== 'authorization_code' || form.get('client_id') !== CLIENT_ID || form.get('redirect_uri') !== issued.redirectUri || proof !== issued.challenge) {
            return fail(400, 'invalid_grant');
          }
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id_token: this.idToken, access_token: 'not-for-the-api', token_type: 'Bearer', expires_in: 3600 }));
        });
        return;
      }
      if (request.method === 'GET' && url.pathname === '/logout' && url.searchParams.get('client_id') === CLIENT_ID && url.searchParams.get('logout_uri') === this.consoleUrl) {
        this.logouts++;
        return response.writeHead(302, { location: this.consoleUrl }).end();
      }
      fail(404, 'not_found');
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

describe('signing in to the console through the hosted UI (authorization code with PKCE)', () => {
  const authServer = new StandInAuthorizationServer();
  const env: Record<string, string> = {};
  // Before the stack starts (hooks run in order): the system function reads where the hosted UI is.
  beforeAll(async () => {
    await authServer.start();
    Object.assign(env, { CONSOLE_COGNITO_DOMAIN: authServer.origin, CONSOLE_COGNITO_CLIENT_ID: CLIENT_ID });
  });
  afterAll(() => new Promise<void>((resolve) => authServer.server.close(() => resolve())));
  const stack = useLocalStack({ env });
  const browser = useBrowser();

  beforeAll(async () => {
    authServer.consoleUrl = `${stack.baseUrl}/console`;
    authServer.idToken = await stack.token('hosted-ui-user');
  });

  it('signs in with the button, exchanges the code with the verifier, and keeps neither code nor verifier', async () => {
    const { page } = browser;
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    await page.goto(`${stack.baseUrl}/console`);
    await page.getByRole('button', { name: 'Sign in with Cognito' }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Sign in with Cognito' }).click();
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    await page.getByText('No triggers yet.').waitFor();

    expect(page.url()).toBe(`${stack.baseUrl}/console`);
    expect(authServer.tokenRequests).toHaveLength(1);
    expect(authServer.tokenRequests[0]!.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authServer.tokenRequests[0]!.has('client_secret')).toBe(false);
    const stored = await page.evaluate(() => Object.fromEntries(Object.entries((globalThis as any).sessionStorage)));
    expect(Object.keys(stored)).toEqual(['flowgate.credentials']);
    expect(JSON.parse(stored['flowgate.credentials'] as string)).toEqual({ kind: 'token', value: authServer.idToken, via: 'hostedUi' });
    // The CSP let the token request through to the hosted UI's origin, and nothing was refused.
    expect(errors).toEqual([]);

    // Sign out ends the hosted UI's session too, and comes back to the sign-in page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => authServer.logouts).toBe(1);
    await page.getByRole('button', { name: 'Sign in with Cognito' }).waitFor();
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0);
  });

  it('refuses a callback whose state this tab did not send, without sending its code anywhere', async () => {
    const { page } = browser;
    const before = authServer.tokenRequests.length;
    await page.goto(`${stack.baseUrl}/console?code=stolen&state=forged`);
    await expect(page.getByRole('alert').filter({ hasText: /\S/ }).textContent()).resolves.toContain('did not come back to the tab that started it');
    expect(page.url()).toBe(`${stack.baseUrl}/console`);
    expect(authServer.tokenRequests.length).toBe(before);
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0);
  });

  it('says in words when the hosted UI refuses the code', async () => {
    const { page } = browser;
    await page.goto(`${stack.baseUrl}/console`);
    await page.getByRole('button', { name: 'Sign in with Cognito' }).waitFor();
    // This tab's pending sign-in, answered with a code the server never issued.
    await page.evaluate(() => (globalThis as any).sessionStorage.setItem('flowgate.sign-in', JSON.stringify({ state: 's', verifier: 'v'.repeat(43) })));
    await page.goto(`${stack.baseUrl}/console?code=never-issued&state=s`);
    await expect(page.getByRole('alert').filter({ hasText: /\S/ }).textContent()).resolves.toContain('did not sign you in');
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0);
  });
});
