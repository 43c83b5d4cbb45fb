import { describe, expect, it } from 'vitest';
import { pageErrors, seriousA11yViolations, useBrowser } from '../support/browser.js';
import { call, useLocalStack } from '../support/local-stack.js';

/** The Search page, driven in Chromium against one local stack. */
describe('the console\'s Search page', () => {
  const stack = useLocalStack();
  const browser = useBrowser();

  it('lists indexes with counts, searches with highlights and facets, shows a document by id, and purges by typed name', async () => {
    const token = await stack.token('search-console-user');
    const settings = { searchable_fields: [{ field: 'title', weight: 2 }, 'body'], filterable_fields: [{ field: 'genre', type: 'string' }] };
    expect((await call(stack, 'PUT', '/storage/search/books', { token, body: settings })).status).toBe(201);
    const documents = [
      { id: 'b1', title: 'The Hobbit', body: 'A <b>hobbit</b> & a wizard', genre: 'fantasy' },
      { id: 'b2', title: 'Dune', body: 'A desert planet', genre: 'science-fiction' },
      { id: 'b3', title: 'The Silmarillion', body: 'Elves and a wizard', genre: 'fantasy' },
    ];
    expect((await call(stack, 'POST', '/storage/search/books/documents?wait=true', { token, body: { documents } })).status).toBe(200);

    const { page } = browser;
    const errors = pageErrors(page);
    await page.goto(`${stack.baseUrl}/console#token=${token}`);
    await page.getByRole('heading', { name: 'Triggers', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Search', exact: true }).click();
    await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'books' });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['books', '3', '0', 'title ×2, body']));
    expect(await seriousA11yViolations(page)).toEqual([]);

    await page.getByRole('link', { name: 'books' }).click();
    await page.getByRole('heading', { name: 'Search index books', level: 1 }).waitFor();
    await page.getByText('3 matches').waitFor();
    await page.getByLabel('Search', { exact: true }).fill('wizard hob');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText(/^1 match in/).waitFor();
    // The document's own markup is text: only the matched words are marked.
    await expect(page.locator('ol.hits mark').allTextContents()).resolves.toEqual(['Hobbit', 'hobbit', 'wizard']);
    await expect(page.locator('ol.hits').textContent()).resolves.toContain('A <b>hobbit</b> & a wizard');
    await expect(page.locator('ol.hits b').count()).resolves.toBe(0);
    await expect(page.getByRole('heading', { name: 'genre', level: 3 }).isVisible()).resolves.toBe(true);

    await page.getByLabel('Document id').fill('b2');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect(page.getByRole('region', { name: 'Document b2' }).textContent()).resolves.toContain('"A desert planet"');

    await page.getByRole('button', { name: 'Purge' }).click();
    await page.getByLabel('Type the index name to confirm').fill('books');
    await page.getByRole('dialog').getByRole('button', { name: 'Purge' }).click();
    await page.getByText('books purged.').waitFor();
    expect((await call(stack, 'GET', '/storage/search/books', { token })).json.data).toMatchObject({ documents: 0, searchable_fields: [{ field: 'title', weight: 2 }, { field: 'body', weight: 1 }] });
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  }, 60_000);
});
