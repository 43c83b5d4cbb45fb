import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { README, readmeWithSendersTable } from '../../bin/senders-table.js';
import { SENDERS } from '../../functions/domain/webhooks/senders/catalog.js';

describe('README: the Senders table', () => {
  it('is the catalog\'s, as `npm run docs:senders` writes it: no sender is listed by hand', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme).toBe(readmeWithSendersTable(readme));
    for (const row of SENDERS) expect(readme, row.id).toContain(`| \`${row.id}\` |`);
  });
});
