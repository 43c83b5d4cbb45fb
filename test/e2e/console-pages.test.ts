import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type { QRCode } from 'jsqr';
import { describe, expect, it } from 'vitest';
import { pageErrors, seriousA11yViolations, useBrowser } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';
import { totpCodeAt } from '../support/totp.js';

/** The accounts routes' clock: real time, stepped ahead by a test rather than waiting for a TOTP step to come. */
const ahead = { ms: 0 };
const serverNow = () => Date.now() + ahead.ms;

/**
 * A TOTP time step (30 s) after `used` whose code the server takes now: a code is accepted once per
 * step, and one step either side of the server's. So the step after `used` is taken at once even
 * while it is still the coming one (or this step, if that is later); for a step two ahead, the
 * server's clock is stepped forward until it is the coming one, instead of waiting up to 30 s.
 */
function nextStepAfter(used: number): number {
  const step = Math.max(used + 1, Math.floor(serverNow() / 30_000));
  ahead.ms += Math.max(0, (step - 1) * 30_000 - serverNow());
  return step;
}

/** A QR decoder (CommonJS, whose types say `export default`): what a phone's camera app would read. */
const jsQR = createRequire(import.meta.url)('jsqr') as (data: Uint8ClampedArray, width: number, height: number) => QRCode | null;

/** The Buckets and Account pages, driven in Chromium against one local stack. */
describe('the console\'s Buckets and Account pages', () => {
  const stack = useLocalStack({ now: serverNow });
  const browser = useBrowser();

  async function signInByLink(sub: string, hash = '') {
    const { page } = browser;
    // An API's 4xx that a test provokes on purpose is logged too, and is not an error.
    const errors = pageErrors(page, { provokedApiErrors: true });
    await page.goto(`${stack.baseUrl}/console#token=${await stack.token(sub)}`);
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    if (hash) await page.goto(`${stack.baseUrl}/console${hash}`);
    return { page, errors };
  }

  const keyPath = (bucket: string, key: string) => `/storage/kv/${bucket}/keys/${encodeURIComponent(encodeURIComponent(key))}`;

  it('lists buckets, finds a key by prefix, shows its value, writes and deletes values, and purges after the typed name', async () => {
    const token = await stack.token('bucket-user');
    await call(stack, 'PUT', '/storage/kv/reports', { token, body: { description: 'Monthly reports' } });
    await call(stack, 'PUT', '/storage/kv/archive', { token });
    const values: Record<string, string | Uint8Array> = {
      '2026/jan': 'January figures', '2026/feb': 'February figures', 'drafts/odd?key%41': 'an awkward key', notes: 'free text',
      'images/logo': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00]),
    };
    for (const [key, value] of Object.entries(values)) {
      expect((await call(stack, 'PUT', keyPath('reports', key), { token, rawBody: value, headers: { 'content-type': typeof value === 'string' ? 'text/plain' : 'image/png' } })).status).toBe(200);
    }

    const { page, errors } = await signInByLink('bucket-user');
    await page.getByRole('link', { name: 'Buckets' }).click();
    await page.getByRole('heading', { name: 'Buckets', level: 1 }).waitFor();
    await expect(page.getByRole('link', { name: 'Buckets' }).getAttribute('aria-current')).resolves.toBe('page');
    await expect(page.getByRole('row').filter({ hasText: 'reports' }).textContent()).resolves.toContain('Monthly reports');
    await page.getByRole('link', { name: 'archive' }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);

    await page.getByRole('link', { name: 'reports' }).click();
    await page.getByRole('heading', { name: 'Bucket reports', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'notes' }).waitFor();
    await page.getByLabel('Key prefix').fill('2026/');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('2 keys starting with "2026/".').waitFor();
    const keys = page.getByRole('list', { name: 'Keys' }).getByRole('button');
    expect(await keys.allTextContents()).toEqual(['2026/feb', '2026/jan']);

    await page.getByRole('button', { name: '2026/jan' }).click();
    await expect(page.getByLabel('Content of 2026/jan').textContent()).resolves.toBe('January figures');
    // A key with ? and % in it travels encoded twice and comes back as stored.
    await page.getByLabel('Key prefix').fill('drafts/');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: 'drafts/odd?key%41' }).click();
    await expect(page.getByLabel('Content of drafts/odd?key%41').textContent()).resolves.toBe('an awkward key');
    expect(await seriousA11yViolations(page)).toEqual([]);
    // Bytes that are not text are described, not shown garbled.
    await page.getByLabel('Key prefix').fill('images/');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: 'images/logo' }).click();
    await page.getByText('7 bytes that are not UTF-8 text').waitFor();
    await page.getByText('Content type: image/png').waitFor();
    await page.getByLabel('Key prefix').fill('drafts/');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: 'drafts/odd?key%41' }).click();
    // The console guide's picture: retaken with UPDATE_SCREENSHOTS=1 npm test, so a plain run leaves the tree clean.
    if (process.env.UPDATE_SCREENSHOTS) await page.screenshot({ path: resolve(import.meta.dirname, '../../docs/console-bucket.png'), fullPage: true });

    // Writing a value.
    await page.getByLabel('Bucket', { exact: true }).fill('reports');
    await page.getByLabel('Key', { exact: true }).fill('2026/mar');
    await page.getByLabel('Value', { exact: true }).fill('March figures');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved "2026/mar" in reports.').waitFor();
    expect((await call(stack, 'GET', keyPath('reports', '2026/mar'), { token })).text).toBe('March figures');

    // Deleting one, after confirming.
    await page.getByLabel('Key prefix').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: 'notes' }).click();
    await page.getByLabel('Content of notes').waitFor();
    await page.getByRole('region', { name: 'Value of "notes"' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this value?' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Deleted "notes".').waitFor();
    expect((await call(stack, 'GET', keyPath('reports', 'notes'), { token })).status).toBe(404);

    // The purge asks for the bucket's name first.
    await page.getByRole('button', { name: 'Purge' }).click();
    const dialog = page.getByRole('dialog', { name: 'Purge reports?' });
    const confirm = dialog.getByRole('button', { name: 'Purge' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Type the bucket name to confirm').fill('report');
    expect(await confirm.isDisabled()).toBe(true);
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect((await call(stack, 'GET', '/storage/kv/reports/keys', { token })).json.data.keys).toHaveLength(5);
    await dialog.getByLabel('Type the bucket name to confirm').fill('reports');
    await confirm.click();
    await page.getByText('This bucket holds no values.').waitFor();
    expect((await call(stack, 'GET', '/storage/kv/reports/keys', { token })).json.data.keys).toEqual([]);
    // The configuration stays.
    expect((await call(stack, 'GET', '/storage/kv/reports', { token })).json.data.description).toBe('Monthly reports');
    expect(errors).toEqual([]);
  });

  it('pages through a bucket\'s keys with "More keys"', async () => {
    const token = await stack.token('paging-user');
    await call(stack, 'PUT', '/storage/kv/many', { token });
    const keys = Array.from({ length: 57 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    await Promise.all(keys.map((key) => call(stack, 'PUT', keyPath('many', key), { token, rawBody: key })));
    const { page } = await signInByLink('paging-user', '#/buckets/many');
    await page.getByText('50 keys, more to load.').waitFor();
    await page.getByRole('button', { name: 'More keys' }).click();
    await page.getByText('57 keys.').waitFor();
    expect(await page.getByRole('button', { name: 'More keys' }).isHidden()).toBe(true);
    expect(await page.getByRole('list', { name: 'Keys' }).getByRole('listitem').allTextContents()).toEqual(keys);
  });

  it('saves, shows and deletes a value by ?key=, so a key with /, ?, #, %, +, & and Unicode round-trips', async () => {
    const token = await stack.token('odd-key-user');
    await call(stack, 'PUT', '/storage/kv/odd', { token });
    const { page, errors } = await signInByLink('odd-key-user', '#/buckets/odd');
    await page.getByText('This bucket holds no values.').waitFor();
    const valueRequests: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/storage/kv/odd/') && !url.pathname.endsWith('/keys')) valueRequests.push(`${request.method()} ${url.pathname}${url.search}`);
    });
    const key = 'drafts/a?b#c%41 +d&e=é';
    await page.getByLabel('Key', { exact: true }).fill(key);
    await page.getByLabel('Value', { exact: true }).fill('odd value');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Saved "${key}" in odd.`).waitFor();
    expect((await call(stack, 'GET', `/storage/kv/odd/value?key=${encodeURIComponent(key)}`, { token })).text).toBe('odd value');
    await page.getByRole('button', { name: key }).click();
    await expect(page.getByLabel(`Content of ${key}`).textContent()).resolves.toBe('odd value');
    await page.getByRole('region', { name: `Value of "${key}"` }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete this value?' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText(`Deleted "${key}".`).waitFor();
    expect((await call(stack, 'GET', '/storage/kv/odd/keys', { token })).json.data.keys).toEqual([]);
    const byKey = `/storage/kv/odd/value?${new URLSearchParams({ key })}`;
    expect(valueRequests).toEqual([`PUT ${byKey}`, `GET ${byKey}`, `DELETE ${byKey}`]);
    expect(errors).toEqual([]);
  });

  it('creates a bucket from the Buckets page and opens it; a taken name is refused in words', async () => {
    const { page } = await signInByLink('new-bucket-user', '#/buckets');
    await page.getByText('No buckets yet.').waitFor();
    await page.getByLabel('Bucket name').fill('fresh');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Bucket fresh', level: 1 }).waitFor();
    await page.getByText('This bucket holds no values.').waitFor();
    const token = await stack.token('new-bucket-user');
    expect((await call(stack, 'GET', '/storage/kv', { token })).json.data.buckets.map((b: { name: string }) => b.name)).toEqual(['fresh']);
    await page.getByRole('link', { name: 'All buckets' }).click();
    await page.getByRole('link', { name: 'fresh' }).waitFor();
    await page.getByLabel('Bucket name').fill('fresh');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect(page.getByRole('alert').filter({ hasText: /\S/ }).textContent()).resolves.toContain('It already exists.');
  });

  it('says in words when a bucket does not exist', async () => {
    const { page } = await signInByLink('no-bucket-user', '#/buckets/missing');
    await expect(page.getByRole('alert').filter({ hasText: /\S/ }).first().textContent()).resolves.toContain('no longer exists');
  });

  it('sets up the authenticator: QR code and secret, a wrong code refused in words, then ten recovery codes to copy or download', async () => {
    const { page, errors } = await signInByLink('totp-user', '#/account');
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Set up authenticator' }).click();
    await page.getByRole('img', { name: 'QR code to add Flowgate to your authenticator app' }).waitFor();
    const secret = (await page.locator('#totp-secret').textContent())!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    // The QR code scans: drawn to a canvas as a browser would show it, it decodes to the otpauth URI of that secret.
    const qr = await page.evaluate(async () => {
      const d = (globalThis as any).document;
      const svg = d.querySelector('svg[role="img"]');
      const image = new (globalThis as any).Image();
      image.src = `data:image/svg+xml;base64,${btoa(new (globalThis as any).XMLSerializer().serializeToString(svg))}`;
      await image.decode();
      const canvas = d.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext('2d');
      context.drawImage(image, 0, 0);
      return { width: canvas.width, height: canvas.height, pixels: Array.from(context.getImageData(0, 0, canvas.width, canvas.height).data as number[]) };
    });
    const decoded = jsQR(Uint8ClampedArray.from(qr.pixels), qr.width, qr.height);
    expect(decoded?.data).toMatch(/^otpauth:\/\/totp\//);
    expect(new URL(decoded!.data).searchParams.get('secret')).toBe(secret);
    expect(await seriousA11yViolations(page)).toEqual([]);

    const right = totpCodeAt(secret, serverNow());
    const wrong = String((Number(right) + 500_000) % 1_000_000).padStart(6, '0');
    await page.getByLabel('Code', { exact: true }).fill(wrong);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await expect(page.getByRole('alert').filter({ hasText: /\S/ }).textContent()).resolves.toContain('That code was not accepted');

    await page.getByLabel('Code', { exact: true }).fill(totpCodeAt(secret, serverNow()));
    await page.getByRole('button', { name: 'Confirm' }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await codes.first().waitFor();
    const shown = await codes.allTextContents();
    expect(shown).toHaveLength(10);
    for (const code of shown) expect(code).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/);
    await page.getByRole('button', { name: 'Copy the recovery codes' }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);

    // The download is a Blob URL: the page's CSP must let it through, and the file holds the codes.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the recovery codes' }).click()]);
    expect(download.suggestedFilename()).toBe('flowgate-recovery-codes.txt');
    const text = await readFile((await download.path())!, 'utf8');
    for (const code of shown) expect(text).toContain(code);

    // The codes are real: one of them verifies once through the API.
    const token = await stack.token('totp-user');
    expect((await call(stack, 'POST', '/accounts/recovery-codes/verify', { token, body: { code: shown[0] } })).json.data.remaining).toBe(9);
    // Shown once: after a reload the page lists the authenticator and how many codes are left, not the codes.
    await page.reload();
    await page.getByRole('cell', { name: 'Authenticator', exact: true }).waitFor();
    await page.getByText('Recovery codes left: 9 of 10.').waitFor();
    expect(await page.getByRole('list', { name: 'Recovery codes' }).count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('manages the authenticators: regenerates codes and adds one after asking for a current code, removes one, and lists the security events', async () => {
    const token = await stack.token('mfa-console-user');
    const secret = (await call(stack, 'POST', '/accounts/totp-registration', { token })).json.data.secret as string;
    // Confirmed with the previous step's code, so the page's step-up code (this step's) is newer.
    expect((await call(stack, 'POST', '/accounts/confirm-totp-registration', { token, body: { secret, code: totpCodeAt(secret, serverNow() - 30_000), name: 'Phone' } })).status).toBe(200);
    const { page, errors } = await signInByLink('mfa-console-user', '#/account');
    await page.getByRole('cell', { name: 'Phone', exact: true }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);

    // Each action asks for a code of its own: a proof serves one action once, and a code one time step.
    // Codes of the steps after the registration's, in turn: this step's, the coming one's (within the
    // one step of drift the server allows), then the one after, once the server's clock is a step on.
    let lastStep = Math.floor((serverNow() - 30_000) / 30_000);
    const stepUp = async () => {
      await page.getByRole('dialog').waitFor();
      lastStep = nextStepAfter(lastStep);
      await page.getByLabel('Current code', { exact: true }).fill(totpCodeAt(secret, lastStep * 30_000));
      await page.getByRole('button', { name: 'Continue' }).click();
    };
    await page.getByRole('button', { name: 'New recovery codes' }).click();
    await stepUp();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await codes.first().waitFor();
    expect(await codes.allTextContents()).toHaveLength(10);
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: 'Add another authenticator' }).click();
    await stepUp();
    await page.locator('#totp-secret').waitFor();
    const second = (await page.locator('#totp-secret').textContent())!;
    await page.getByLabel('Name').fill('Tablet');
    await page.getByLabel('Code', { exact: true }).fill(totpCodeAt(second, serverNow()));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('cell', { name: 'Tablet', exact: true }).waitFor();

    await page.getByRole('button', { name: 'Remove authenticator Phone' }).click();
    await stepUp();
    await page.getByRole('cell', { name: 'Phone', exact: true }).waitFor({ state: 'detached' });
    const listed = (await call(stack, 'GET', '/accounts/factors', { token })).json.data;
    expect(listed.factors.map((f: { name: string }) => f.name)).toEqual(['Tablet']);

    for (const words of ['Authenticator added', 'New recovery codes', 'Code accepted', 'Authenticator removed']) {
      await page.getByRole('cell', { name: words, exact: true }).first().waitFor();
    }
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('creates an API key with the keyboard alone, shows it once, and deletes it after confirmation', async () => {
    const { page } = await signInByLink('keys-user', '#/account');
    await page.getByText('No API keys yet.').waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    const focusedText = () => page.evaluate(() => {
      const active = (globalThis as any).document.activeElement;
      return `${active?.tagName ?? ''} ${active?.textContent ?? ''}`;
    });
    let reached = false;
    for (let i = 0; i < 30 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await focusedText()) === 'BUTTON Create';
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    const notice = page.getByText('Your new API key, shown this once only');
    await notice.waitFor();
    const key = (await page.locator('.notice code').first().textContent())!;
    // The key works, and the list (a user's) shows its id, never the key.
    expect((await call(stack, 'GET', '/storage/kv', { apiKey: key })).status).toBe(200);
    const listed = await call(stack, 'GET', '/api-keys', { token: await stack.token('keys-user') });
    expect(listed.status).toBe(200);
    const [{ id }] = listed.json.data.api_keys;
    await page.getByRole('row').filter({ hasText: id }).waitFor();
    expect(await page.getByRole('table').textContent()).not.toContain(key);

    await page.reload();
    await page.getByRole('row').filter({ hasText: id }).waitFor();
    expect(await page.getByText('shown this once only').count()).toBe(0);
    expect(await page.content()).not.toContain(key);

    // Revoking, with the keyboard too: the row's Delete, then the dialog's.
    await page.getByRole('button', { name: `Delete API key ${id}` }).focus();
    await page.keyboard.press('Space');
    const dialog = page.getByRole('dialog', { name: 'Delete this API key?' });
    await dialog.waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.keyboard.press('Shift+Tab'); // from Cancel, where the dialog opens, back to Delete
    await page.keyboard.press('Enter');
    await page.getByText('No API keys yet.').waitFor();
    expect((await call(stack, 'GET', '/storage/kv', { apiKey: key })).status).toBe(401);
  });

  it('signed in with an API key, the Account page says the authenticator needs a token', async () => {
    const apiKey = (await call(stack, 'POST', '/api-keys', { token: await stack.token('key-only-user') })).json.data.api_key as string;
    const { page } = browser;
    await page.goto(`${stack.baseUrl}/console`);
    await page.getByLabel('API key').fill(apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByText('needs a sign-in with your own token').waitFor();
    expect(await page.getByRole('button', { name: 'Set up authenticator' }).count()).toBe(0);
  });
});
