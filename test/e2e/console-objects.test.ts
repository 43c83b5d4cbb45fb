import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pageErrors, seriousA11yViolations, useBrowser } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';

/** The Objects page, driven in Chromium against one local stack: the browser's bytes go to s3rver through presigned URLs. */
describe("the console's Objects page", () => {
  const stack = useLocalStack();
  const browser = useBrowser();

  it('lists stores with usage, uploads a file from the browser with progress, navigates by prefix, downloads, deletes, and purges after the typed name', async () => {
    const token = await stack.token('objects-console-user');
    expect((await call(stack, 'PUT', '/storage/objects/photos', { token, body: { description: 'Holiday photos' } })).status).toBe(201);
    expect((await call(stack, 'PUT', '/storage/objects/photos/objects/2026%252Fjan.txt', { token, rawBody: 'January', headers: { 'content-type': 'text/plain' } })).status).toBe(200);

    const { page } = browser;
    const errors = pageErrors(page, { provokedApiErrors: true });
    await page.goto(`${stack.baseUrl}/console#token=${token}`);
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();

    await page.getByRole('link', { name: 'Objects' }).click();
    await page.getByRole('heading', { name: 'Objects', level: 1 }).waitFor();
    await expect(page.getByRole('row').filter({ hasText: 'photos' }).textContent()).resolves.toContain('7 B');
    expect(await seriousA11yViolations(page)).toEqual([]);

    await page.getByRole('link', { name: 'photos' }).click();
    await page.getByRole('heading', { name: 'Object store photos', level: 1 }).waitFor();
    await page.getByText('1 object, 7 B.').waitFor();
    // Prefix navigation: 2026/ is a folder; inside it, the object; up again.
    await page.getByRole('button', { name: '2026/' }).click();
    await page.getByRole('cell', { name: 'jan.txt', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Up one level' }).click();
    await page.getByRole('button', { name: '2026/' }).waitFor();

    // Upload a 6 MiB file: two presigned parts straight to S3, then complete.
    const path = join(tmpdir(), `console-upload-${process.pid}.bin`);
    const bytes = Buffer.alloc(6 * 1024 * 1024, 7);
    await writeFile(path, bytes);
    await page.getByLabel('File', { exact: true }).setInputFiles(path);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByText(/^Uploaded "console-upload-/).waitFor();
    await expect(page.getByLabel('Upload progress').getAttribute('max')).resolves.toBe(String(bytes.length));
    await expect(page.locator('progress').evaluate((element) => (element as unknown as { value: number }).value)).resolves.toBe(bytes.length);
    const name = path.split('/').pop()!;
    await page.getByRole('cell', { name, exact: true }).waitFor();
    await page.getByText('2 objects, 6.0 MiB.').waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);

    // Download it back through a presigned GET.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${name}` }).click()]);
    expect((await readFile(await download.path())).equals(bytes)).toBe(true);
    await rm(path);

    // Delete it.
    await page.getByRole('button', { name: `Delete ${name}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText(`Deleted "${name}".`).waitFor();
    await page.getByText('1 object, 7 B.').waitFor();

    // Purge: the button waits for the typed name.
    await page.getByRole('button', { name: 'Purge' }).click();
    const confirm = page.getByRole('dialog').getByRole('button', { name: 'Purge' });
    await page.getByLabel('Type the store name to confirm').fill('photo');
    expect(await confirm.isDisabled()).toBe(true);
    await page.getByLabel('Type the store name to confirm').fill('photos');
    await confirm.click();
    await page.getByText('photos purged.').waitFor();
    await page.getByText('0 objects, 0 B.').waitFor();
    expect((await call(stack, 'GET', '/storage/objects/photos', { token })).json.data).toMatchObject({ description: 'Holiday photos', objects: 0 });
    expect(errors).toEqual([]);
  }, 60_000);

  it('downloads and deletes an object by ?key=, so a key with ?, #, %, +, & and Unicode round-trips', async () => {
    const token = await stack.token('objects-odd-key-user');
    const key = 'a?b#c%41 +d&e=é.txt';
    expect((await call(stack, 'PUT', '/storage/objects/odd', { token })).status).toBe(201);
    expect((await call(stack, 'PUT', `/storage/objects/odd/object?key=${encodeURIComponent(key)}`, { token, rawBody: 'odd bytes', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
    const { page } = browser;
    const errors = pageErrors(page, { provokedApiErrors: true });
    const objectRequests: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      // Listings are `…/objects`; each object is named by `…/object?key=` alone.
      if (/^\/storage\/objects\/odd\/object(\/|$)/.test(url.pathname)) objectRequests.push(`${request.method()} ${url.pathname}${url.search}`);
    });
    await page.goto(`${stack.baseUrl}/console#token=${token}`);
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    await page.goto(`${stack.baseUrl}/console#/objects/odd`);
    await page.getByRole('cell', { name: key, exact: true }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${key}` }).click()]);
    expect(await readFile(await download.path(), 'utf8')).toBe('odd bytes');
    await page.getByRole('button', { name: `Delete ${key}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText(`Deleted "${key}".`).waitFor();
    expect((await call(stack, 'GET', '/storage/objects/odd/objects', { token })).json.data.objects).toEqual([]);
    const query = new URLSearchParams({ key });
    expect(objectRequests).toEqual([`POST /storage/objects/odd/object/url?${query}`, `DELETE /storage/objects/odd/object?${query}`]);
    expect(errors).toEqual([]);
  }, 60_000);
});
